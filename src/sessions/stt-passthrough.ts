import type { Binding } from "../catalogue/types.ts";
import { CLOSE, ERRORS, ProviderError, sessionFailure } from "../errors.ts";
import { audioSeconds } from "../ledger/usage.ts";
import type { RawUpstream, SttProvider, SttStreamRequest } from "../providers/stt-types.ts";
import type { SessionDeps } from "./admission.ts";
import { openWithin } from "./lifecycle/candidates.ts";
import type { Close, Outcome, SessionEnding } from "./lifecycle/ending.ts";
import { type CoreSetup, SessionCore } from "./lifecycle/session-core.ts";

// `event_format=provider`: the client speaks the provider's own protocol through the router.
// Frames are relayed both ways as they are (binary stays binary, text stays text): no parsing,
// no mapping, no timestamp rewriting, no frames of the router's own. Frames sent before the
// upstream is connected are kept and relayed in order. The audio in client frames (binary frames,
// and base64 audio in text frames where the upstream's protocol carries it so) is metered: a frame
// is relayed once the credit hold covers it. Frames either way count as activity for the idle
// timeout (4408). The lifecycle is every session's (`SessionCore`).

export interface PassthroughPort {
  send(frame: string | Uint8Array): void;
  close(code: number, reason: string): void;
}

export interface PassthroughSetup extends CoreSetup {
  request: Omit<SttStreamRequest, "model">;
  bytesPerSecond: number;
}

export type PassthroughDeps = SessionDeps<SttProvider, PassthroughPort>;

type Frame = string | Uint8Array;

export class SttPassthrough extends SessionCore<Frame, PassthroughSetup, PassthroughDeps> {
  private upstream: RawUpstream | undefined;
  /** The upstream closed of itself: the router has nothing more to tell it. */
  private upstreamGone = false;
  /** Tells the provider's health that its upstream failed after it served. */
  private upstreamFailed: ((err: unknown) => void) | undefined;
  /** How the router closes the upstream when the session ends (absent: the client closed). */
  private goodbye: Close | undefined;
  private receivedBytes = 0;
  /** The upstream's measure of the audio in a client text frame (base64 audio in JSON); set once it is known. */
  private meterText: (frame: string) => number = () => 0;
  /** The audio bytes in the frame at the gate's head. */
  private headAudio = 0;
  /** Resolves once the session has ended and settled: frames flow through callbacks until then. */
  private readonly over: Promise<void>;
  private ended!: () => void;

  constructor(setup: PassthroughSetup, deps: PassthroughDeps) {
    super(setup, deps, { channel: "stt-passthrough", quiet: "no frame either way" });
    this.over = new Promise((resolve) => (this.ended = resolve));
  }

  /** A client frame, relayed untouched once its audio is paid for. */
  frame(frame: Frame): void {
    if (this.closed || this.exhausted) return;
    this.idle.touch();
    this.gate.push(frame);
  }

  abort(): void {
    void this.finish("client_left", null);
  }

  override shutdown(): void {
    if (!this.closed) this.goodbye = { code: CLOSE.goingAway, reason: "server shutdown" };
    super.shutdown();
  }

  private get receivedSeconds(): number {
    return audioSeconds(this.receivedBytes, this.setup.bytesPerSecond);
  }

  // Asked once per frame, in order, once the upstream is known (its text meter may keep state).
  protected usageWith(frame: Frame): number | undefined {
    this.headAudio = typeof frame === "string" ? this.meterText(frame) : frame.byteLength;
    return this.headAudio > 0 ? audioSeconds(this.receivedBytes + this.headAudio, this.setup.bytesPerSecond) : undefined;
  }

  protected admit(frame: Frame): void {
    if (this.headAudio > 0) {
      this.receivedBytes += this.headAudio;
      // What a crash of the server is billed.
      this.admission!.meter.delivered(this.binding!, this.receivedSeconds);
    }
    this.upstream!.send(frame);
  }

  /** The balance cannot cover the next frame: it and those after it are neither relayed nor billed. */
  protected exhaust(): void {
    if (this.exhausted) return;
    this.exhausted = true;
    this.goodbye = { code: CLOSE.normal, reason: "balance exhausted" };
    void this.cutOff("the balance is used up");
  }

  /** A hold the ledger could not answer for is treated as one it refused. */
  protected override coverFailed(): void {
    this.exhaust();
  }

  /** Frames are metered by the upstream's measure: they go through once it is connected. */
  protected override startInput(): void {}

  protected candidateRun() {
    return {
      connect: (binding: Binding) => this.idle.during(this.connect(binding)),
      serve: (_binding: Binding, served: () => void, failed: (err: unknown) => void) => {
        served(); // its upstream accepted the session
        this.upstreamFailed = failed;
        return this.over;
      },
      canMoveOn: () => !this.upstream,
      moveOn: () => {},
    };
  }

  private async connect(binding: Binding): Promise<void> {
    const provider = this.deps.provider(binding.provider.id);
    if (!provider?.passthrough) throw new ProviderError(`${binding.provider.id} has no realtime WebSocket`, true);
    const opening = openWithin(provider.passthrough({ ...this.setup.request, model: binding.id }), this.deps.connectTimeoutMs, provider, (late) => late.close(CLOSE.normal, "too late"));
    // A session that ends while its upstream opens does not wait for it: the upstream is closed when it comes.
    const upstream = await Promise.race([opening, this.over.then(() => undefined)]);
    if (!upstream || this.closed) {
      void opening.then(
        (late) => late.close(CLOSE.normal, "client closed"),
        () => {},
      );
      return;
    }
    this.binding = binding;
    this.meterText = upstream.audioBytes ?? (() => 0);
    upstream.onFrame((frame) => {
      this.idle.touch();
      this.deps.port.send(frame);
    });
    upstream.onClose((code, reason) => {
      this.upstreamGone = true;
      const normal = code === CLOSE.normal;
      // Cut off or an internal error while the session ran: the provider's failure, counted on its health.
      if (!this.closed && [CLOSE.noStatus, CLOSE.abnormal, 1011].includes(code)) this.upstreamFailed?.(new ProviderError(`${binding.provider.id} closed the stream: ${code}`, true));
      void this.finish(normal ? "completed" : "failed", { code: code === CLOSE.noStatus || code === CLOSE.abnormal ? ERRORS.upstream_error.close : code, reason });
    });
    this.upstream = upstream;
    // Frames sent before the upstream was ready go on now, each as its audio is paid for.
    this.gate.start();
  }

  /** The relay speaks no frames of its own: the close code tells the client. */
  protected sendError(): void {}

  /** The server ends the session (idle, a revoked key, a disabled tenant, a failed provider): the upstream hears why. */
  protected override async fail(err: unknown): Promise<void> {
    if (!this.closed) this.goodbye ??= { code: CLOSE.normal, reason: sessionFailure(err).code };
    await super.fail(err);
  }

  protected stopWork(): void {
    const { code, reason } = this.goodbye ?? { code: CLOSE.normal, reason: "client closed" };
    if (!this.upstreamGone) this.upstream?.close(code, reason);
  }

  protected override async finish(outcome: Outcome, close: Close | null): Promise<void> {
    if (this.closed) return;
    await super.finish(outcome, close);
    this.ended();
  }

  /** The audio received is billed, whatever the outcome; recorded failed when nothing was admitted before a cut-off, or the close was not normal. */
  protected ending(outcome: Outcome, close: Close | null): SessionEnding {
    const failed = outcome === "cut_off" ? this.receivedBytes === 0 : close !== null && close.code !== CLOSE.normal;
    return { outcome, billed: this.receivedSeconds, status: failed ? "failed" : "completed", latencyMs: 0, details: { receivedBytes: this.receivedBytes } };
  }
}
