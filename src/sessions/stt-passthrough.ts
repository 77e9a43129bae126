import type { Binding } from "../catalogue/types.ts";
import { ApiError, CLOSE, closeReason, ERRORS, type ErrorCode, sessionFailure } from "../errors.ts";
import type { Payer } from "../ledger/meter.ts";
import { audioSeconds } from "../ledger/usage.ts";
import { ProviderError, type RawUpstream, type SttProvider, type SttStreamRequest } from "../providers/types.ts";
import { withTimeout } from "../util/timeout.ts";
import { admitSession, cutOffStatus, type Admission, type SessionDeps } from "./admission.ts";
import { IdleTimer } from "./idle-timer.ts";

// `event_format=provider`: the client speaks the provider's own protocol through the router.
// Frames are relayed both ways as they are (binary stays binary, text stays text): no parsing,
// no mapping, no timestamp rewriting, no frames of the router's own. Frames sent before the
// upstream is connected are kept and relayed in order. Binary frames from the client are the
// audio that is metered. Frames either way count as activity for the idle timeout (4408).

export interface PassthroughPort {
  send(frame: string | Uint8Array): void;
  close(code: number, reason: string): void;
}

export interface PassthroughSetup {
  id: string;
  request: Omit<SttStreamRequest, "model">;
  bytesPerSecond: number;
  admit: () => Promise<Admission>;
  /** See `IdleTimer`; 0 or absent for none. */
  idleTimeoutMs?: number;
}

export type PassthroughDeps = SessionDeps<SttProvider, PassthroughPort>;

export class SttPassthrough {
  private upstream: RawUpstream | undefined;
  private binding: Binding | undefined;
  private admission: Admission | undefined;
  private pending: (string | Uint8Array)[] = [];
  private receivedBytes = 0;
  private closed = false;
  private exhausted = false;
  private readonly startedAt = new Date();
  private readonly attempts: { provider: string; reason: string }[] = [];
  /** The upstream's measure of the audio in a client text frame (base64 audio in JSON); set once it is known. */
  private meterText: ((frame: string) => number) | undefined;
  readonly finished: Promise<void>;
  private done!: () => void;
  private readonly idle: IdleTimer;

  constructor(
    private readonly setup: PassthroughSetup,
    private readonly deps: PassthroughDeps,
  ) {
    this.finished = new Promise((resolve) => (this.done = resolve));
    const idleMs = setup.idleTimeoutMs ?? 0;
    this.idle = new IdleTimer(idleMs, () => this.end(new ApiError("idle_timeout", `no frame either way for ${idleMs / 1000} s`)));
    void this.run();
  }

  /** Who pays for the session, once admitted. */
  get payer(): Payer | undefined {
    return this.admission?.meter.payer;
  }

  /** A client frame, relayed untouched. */
  frame(frame: string | Uint8Array): void {
    if (this.closed || this.exhausted) return;
    this.idle.touch();
    // Text frames are measured once the upstream is known (in `run`, for those sent before).
    const audio = typeof frame === "string" ? (this.meterText?.(frame) ?? 0) : frame.byteLength;
    if (audio > 0) {
      this.receivedBytes += audio;
      if (this.upstream && !this.cover()) {
        this.receivedBytes -= audio; // refused, not relayed, not billed
        return this.exhaust();
      }
      if (this.upstream) this.noteDelivered();
    }
    if (this.upstream) this.upstream.send(frame);
    else this.pending.push(frame);
  }

  private get receivedSeconds(): number {
    return audioSeconds(this.receivedBytes, this.setup.bytesPerSecond);
  }

  /** The audio received and covered so far: what a crash of the server is billed. */
  private noteDelivered(): void {
    this.admission!.meter.delivered(this.binding!, this.receivedSeconds);
  }

  /** Holds credits for the audio received; false when the balance cannot. */
  private cover(): boolean {
    const covered = this.admission!.meter.cover(this.binding!, this.receivedSeconds);
    if (typeof covered === "boolean") return covered;
    covered.then((ok) => ok || this.exhaust(), () => this.exhaust());
    return true;
  }

  abort(): void {
    this.upstream?.close(CLOSE.normal, "client closed");
    void this.finish(null);
  }

  /** The server ends the session (idle, a revoked key, a disabled tenant); the audio received is billed. */
  end(err: ApiError): void {
    this.upstream?.close(CLOSE.normal, err.code);
    void this.fail(err);
  }

  shutdown(): void {
    this.upstream?.close(CLOSE.goingAway, "server shutdown");
    void this.finish({ code: CLOSE.goingAway, reason: "server_shutdown" });
  }

  private exhaust(): void {
    if (this.exhausted) return;
    this.exhausted = true;
    this.upstream?.close(CLOSE.normal, "balance exhausted");
    void this.finish({ code: ERRORS.insufficient_balance.close, reason: closeReason("insufficient_balance") });
  }

  private async run(): Promise<void> {
    this.admission = await admitSession(this.setup.admit, (err) => this.fail(err), () => this.closed, this.startedAt);
    if (!this.admission) return;
    for (const [i, binding] of this.admission.candidates.entries()) {
      if (this.closed) return;
      const provider = this.deps.provider(binding.provider.id);
      try {
        if (!provider?.passthrough) throw new ProviderError(`${binding.provider.id} has no realtime WebSocket`, true);
        const upstream = await this.idle.during(withTimeout(provider.passthrough({ ...this.setup.request, model: binding.id }), this.deps.connectTimeoutMs, "the upstream did not accept in time", (late) =>
          late.close(CLOSE.normal, "too late"),
        ));
        if (this.closed) return upstream.close(CLOSE.normal, "client closed");
        this.binding = binding;
        // From here on every text frame is measured as it arrives, in order (meters may keep state).
        this.meterText = upstream.audioBytes ?? (() => 0);
        for (const f of this.pending) if (typeof f === "string") this.receivedBytes += this.meterText(f);
        // Audio sent before the upstream was ready is paid for before it is relayed, including
        // what arrives while that hold is being taken; refused, none of it is relayed or billed.
        const covered = (): boolean | Promise<boolean> => this.receivedBytes === 0 || this.admission!.meter.cover(binding, this.receivedSeconds);
        if (!(await covered()) || !(await covered())) {
          upstream.close(CLOSE.normal, "balance exhausted");
          this.receivedBytes = 0;
          this.exhausted = true;
          return void this.finish({ code: ERRORS.insufficient_balance.close, reason: closeReason("insufficient_balance") });
        }
        if (this.closed) return upstream.close(CLOSE.normal, "client closed");
        this.noteDelivered();
        upstream.onFrame((frame) => {
          this.idle.touch();
          this.deps.port.send(frame);
        });
        upstream.onClose((code, reason) => void this.finish({ code: code === CLOSE.noStatus || code === CLOSE.abnormal ? ERRORS.upstream_error.close : code, reason }));
        this.upstream = upstream;
        const queued = this.pending;
        this.pending = [];
        for (const f of queued) upstream.send(f);
        return;
      } catch (err) {
        this.attempts.push({ provider: binding.provider.id, reason: (err as Error).message });
        if (err instanceof ProviderError && err.retryable && i + 1 < this.admission.candidates.length) continue;
        return this.fail(err);
      }
    }
  }

  private async fail(err: unknown): Promise<void> {
    const apiError = sessionFailure(err);
    await this.finish({ code: apiError.closeCode, reason: closeReason(apiError.code as ErrorCode) });
  }

  private async finish(close: { code: number; reason: string } | null): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.idle.stop();
    if (this.admission) {
      await this.admission.meter
        .settle({
          binding: this.binding ?? this.admission.candidates[0],
          status: this.exhausted ? cutOffStatus(this.receivedBytes) : close && close.code !== CLOSE.normal ? "failed" : "completed",
          units: this.receivedSeconds,
          startedAt: this.startedAt,
          latencyMs: 0,
          attempts: this.attempts,
        })
        .catch(() => {});
    }
    if (close) this.deps.port.close(close.code, close.reason);
    this.deps.metrics.requests.inc({ surface: this.deps.surface, provider: this.binding?.provider.id ?? "none", status: close ? String(close.code) : "aborted" });
    this.done();
  }
}
