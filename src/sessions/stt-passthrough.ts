import type { Binding } from "../catalogue/types.ts";
import { ApiError, CLOSE, closeReason, ERRORS, ProviderError } from "../errors.ts";
import type { Payer } from "../ledger/meter.ts";
import { audioSeconds } from "../ledger/usage.ts";
import type { Logger } from "../log.ts";
import type { RawUpstream, SttProvider, SttStreamRequest } from "../providers/types.ts";
import { admitSession, type Admission, type SessionDeps } from "./admission.ts";
import { IdleTimer } from "./idle-timer.ts";
import { openWithin, tryCandidates, type Attempt } from "./lifecycle/candidates.ts";
import { CreditGate } from "./lifecycle/credit-gate.ts";
import { failureOf, type Outcome, recordEnding, type SessionEnding } from "./lifecycle/ending.ts";
import { requestBinding } from "../request-context.ts";

// `event_format=provider`: the client speaks the provider's own protocol through the router.
// Frames are relayed both ways as they are (binary stays binary, text stays text): no parsing,
// no mapping, no timestamp rewriting, no frames of the router's own. Frames sent before the
// upstream is connected are kept and relayed in order. The audio in client frames (binary frames,
// and base64 audio in text frames where the upstream's protocol carries it so) is metered: a frame
// is relayed once the credit hold covers it. Frames either way count as activity for the idle
// timeout (4408).

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

type Frame = string | Uint8Array;

export class SttPassthrough {
  private upstream: RawUpstream | undefined;
  private binding: Binding | undefined;
  private admission: Admission | undefined;
  /** Client frames in arrival order; they go through once the upstream is connected and their audio is covered. */
  private readonly gate: CreditGate<Frame>;
  private receivedBytes = 0;
  private closed = false;
  private exhausted = false;
  private readonly startedAt = new Date();
  private readonly attempts: Attempt[] = [];
  /** The upstream's measure of the audio in a client text frame (base64 audio in JSON); set once it is known. */
  private meterText: (frame: string) => number = () => 0;
  /** The audio bytes in the frame at the gate's head. */
  private headAudio = 0;
  private readonly log: Logger;
  readonly finished: Promise<void>;
  private done!: () => void;
  private readonly idle: IdleTimer;

  constructor(
    private readonly setup: PassthroughSetup,
    private readonly deps: PassthroughDeps,
  ) {
    this.log = deps.log.child({ session: setup.id, channel: "stt-passthrough", ...requestBinding() });
    this.finished = new Promise((resolve) => (this.done = resolve));
    const idleMs = setup.idleTimeoutMs ?? 0;
    this.idle = new IdleTimer(idleMs, () => this.end(new ApiError("idle_timeout", `no frame either way for ${idleMs / 1000} s`)));
    this.gate = new CreditGate<Frame>({
      // Asked once per frame, in order, once the upstream is known (its text meter may keep state).
      usageWith: (frame) => {
        this.headAudio = typeof frame === "string" ? this.meterText(frame) : frame.byteLength;
        return this.headAudio > 0 ? audioSeconds(this.receivedBytes + this.headAudio, setup.bytesPerSecond) : undefined;
      },
      cover: (seconds) => this.admission!.meter.cover(this.binding!, seconds),
      admit: (frame) => {
        if (this.headAudio > 0) {
          this.receivedBytes += this.headAudio;
          // What a crash of the server is billed.
          this.admission!.meter.delivered(this.binding!, this.receivedSeconds);
        }
        this.upstream!.send(frame);
      },
      exhausted: () => this.exhaust(),
      failed: () => this.exhaust(),
    });
    void this.run();
  }

  /** Who pays for the session, once admitted. */
  get payer(): Payer | undefined {
    return this.admission?.meter.payer;
  }

  /** A client frame, relayed untouched once its audio is paid for. */
  frame(frame: Frame): void {
    if (this.closed || this.exhausted) return;
    this.idle.touch();
    this.gate.push(frame);
  }

  private get receivedSeconds(): number {
    return audioSeconds(this.receivedBytes, this.setup.bytesPerSecond);
  }

  abort(): void {
    this.upstream?.close(CLOSE.normal, "client closed");
    void this.finish("client_left", null);
  }

  /** The server ends the session (idle, a revoked key, a disabled tenant); the audio received is billed. */
  end(err: ApiError): void {
    this.upstream?.close(CLOSE.normal, err.code);
    void this.fail(err, err.code === "idle_timeout" ? "client_left" : "failed");
  }

  shutdown(): void {
    this.upstream?.close(CLOSE.goingAway, "server shutdown");
    void this.finish("shutdown", { code: CLOSE.goingAway, reason: "server_shutdown" });
  }

  /** The balance cannot cover the next frame: it and those after it are neither relayed nor billed. */
  private exhaust(): void {
    if (this.exhausted) return;
    this.exhausted = true;
    this.upstream?.close(CLOSE.normal, "balance exhausted");
    void this.finish("cut_off", { code: ERRORS.insufficient_balance.close, reason: closeReason("insufficient_balance") });
  }

  private async run(): Promise<void> {
    this.admission = await admitSession(
      this.setup.admit,
      (err) => this.fail(err, "failed"),
      () => this.closed,
      this.startedAt,
    );
    if (!this.admission) return;
    await tryCandidates(
      this.admission.candidates,
      {
        connect: (binding) => this.idle.during(this.connect(binding)),
        serve: async () => {}, // frames flow through callbacks from here on
        canMoveOn: () => !this.upstream,
        moveOn: () => {},
        closed: () => this.closed,
        fail: (err) => this.fail(err, "failed"),
      },
      this.attempts,
      { log: this.log, metrics: this.deps.metrics },
    );
  }

  private async connect(binding: Binding): Promise<void> {
    const provider = this.deps.provider(binding.provider.id);
    if (!provider?.passthrough) throw new ProviderError(`${binding.provider.id} has no realtime WebSocket`, true);
    const upstream = await openWithin(provider.passthrough({ ...this.setup.request, model: binding.id }), this.deps.connectTimeoutMs, binding.provider.id, (late) =>
      late.close(CLOSE.normal, "too late"),
    );
    if (this.closed) return upstream.close(CLOSE.normal, "client closed");
    this.binding = binding;
    this.meterText = upstream.audioBytes ?? (() => 0);
    upstream.onFrame((frame) => {
      this.idle.touch();
      this.deps.port.send(frame);
    });
    upstream.onClose((code, reason) => {
      const normal = code === CLOSE.normal;
      void this.finish(normal ? "completed" : "failed", { code: code === CLOSE.noStatus || code === CLOSE.abnormal ? ERRORS.upstream_error.close : code, reason });
    });
    this.upstream = upstream;
    // Frames sent before the upstream was ready go on now, each as its audio is paid for.
    this.gate.start();
  }

  private async fail(err: unknown, outcome: Outcome): Promise<void> {
    await this.finish(outcome, failureOf(err, this.log).close);
  }

  private async finish(outcome: Outcome, close: { code: number; reason: string } | null): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.idle.stop();
    this.gate.stop();
    const failed = outcome === "cut_off" ? this.receivedBytes === 0 : close !== null && close.code !== CLOSE.normal;
    const end: SessionEnding = { outcome, billed: this.receivedSeconds, status: failed ? "failed" : "completed", latencyMs: 0, details: { receivedBytes: this.receivedBytes } };
    await recordEnding({ admission: this.admission, binding: this.binding, startedAt: this.startedAt, attempts: this.attempts }, end, { ...this.deps, log: this.log }, close);
    this.done();
  }
}
