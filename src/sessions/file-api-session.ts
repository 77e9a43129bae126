import type { Binding } from "../catalogue/types.ts";
import { ApiError, ProviderError } from "../errors.ts";
import { billedSeconds } from "../ledger/usage.ts";
import type { SttProvider, Transcription, TranscriptionRequest } from "../providers/stt-types.ts";
import type { SessionDeps } from "./admission.ts";
import type { Close, Outcome, SessionEnding } from "./lifecycle/ending.ts";
import { type CoreSetup, SessionCore } from "./lifecycle/session-core.ts";
import { inSpan } from "../tracing/spans.ts";

// A file given whole to the providers' file APIs (an embedded recognizer's among them), on the
// lifecycle every session shares (`SessionCore`): admitted, the candidates in order, each given
// the file only once the credit gate has held for the whole of it on that candidate's binding (a
// fallback to a dearer provider too), settled once and recorded with its outcome.

/** The file as a provider's file API takes it (its billed seconds held for), and the session's own setup. */
export interface HeldFileSetup extends CoreSetup, Omit<TranscriptionRequest, "model" | "given"> {}

export type FileApiDeps = SessionDeps<SttProvider, { close(code: number, reason: string): void }>;

export type FileApiResult = Transcription & { provider: string; model: string };

/** The file, as the credit gate's item for each candidate. */
type WholeFile = { seconds: number };

export class FileApiSession extends SessionCore<WholeFile, HeldFileSetup, FileApiDeps> {
  /** Resolves with the transcript, or rejects with the error its client hears (the signal's reason once it left). */
  readonly result: Promise<FileApiResult>;
  private answer!: (result: FileApiResult) => void;
  private refuse!: (err: unknown) => void;
  private transcript: FileApiResult | undefined;
  private failure: ApiError | undefined;
  /** The whole file is held for on the candidate being tried (or the session is over). */
  private heldFor: () => void = () => {};
  /** A provider was given the file. */
  private given = false;
  /** How many seconds of it the provider's recognizer had, when it tells (else it had it whole). */
  private heardSeconds: number | undefined;
  private readonly work = new AbortController();
  private readonly t0 = performance.now();

  constructor(setup: HeldFileSetup, deps: FileApiDeps) {
    super(setup, deps, { channel: "stt-file" });
    this.result = new Promise((resolve, reject) => ([this.answer, this.refuse] = [resolve, reject]));
    setup.signal?.addEventListener("abort", this.left, { once: true });
    if (setup.signal?.aborted) this.left();
  }

  private readonly left = () => {
    this.endedByClient = true;
    void this.finish("client_left", null);
  };

  protected usageWith(file: WholeFile): number {
    return file.seconds;
  }

  protected admit(): void {
    this.heldFor();
  }

  protected exhaust(): void {
    this.exhausted = true;
    const fallback = this.attempts.length ? ` on ${this.tried!.provider.id}` : "";
    void this.cutOff(`the balance cannot pay for ${this.setup.seconds} s of audio${fallback}`);
  }

  protected candidateRun() {
    return {
      connect: (binding: Binding) => this.hold(binding),
      serve: (binding: Binding, served: () => void) => this.transcribe(binding, served),
      // The file is given whole to each: the next candidate gets it as the first did.
      canMoveOn: () => true,
      moveOn: () => (this.binding = undefined),
    };
  }

  /** Each candidate is held for by the credit gate, on its own binding, before it is given the file. */
  private hold(binding: Binding): Promise<void> {
    this.tried = binding;
    const held = new Promise<void>((resolve) => (this.heldFor = resolve));
    this.gate.coverAfresh();
    this.gate.push({ seconds: this.setup.seconds });
    return held;
  }

  private async transcribe(binding: Binding, served: () => void): Promise<void> {
    const { bytes, container, mimeType, language, seconds } = this.setup;
    this.binding = binding;
    this.given = true;
    let result: Transcription;
    try {
      const provider = this.deps.provider(binding.provider.id)!;
      const recognize = () => provider.transcribe!({ model: binding.id, bytes, container, mimeType, language, seconds, signal: this.work.signal, given: (s) => (this.heardSeconds = s) });
      result = await inSpan("file.recognize", recognize, (r) => ({ "voxroute.heard_seconds": this.heardSeconds ?? seconds, "voxroute.segments": r.segments?.length }));
    } catch (err) {
      // A provider that refused the file itself: the client's file, not the provider, is at fault.
      throw err instanceof ProviderError && !err.retryable ? new ApiError("validation", err.message) : err;
    }
    served();
    if (this.closed) return;
    this.transcript = { ...result, provider: binding.provider.id, model: binding.canonical };
    await this.finish("completed", null);
  }

  protected sendError(error: ApiError): void {
    this.failure = error;
  }

  protected stopWork(): void {
    this.work.abort();
  }

  protected override async finish(outcome: Outcome, close: Close | null): Promise<void> {
    if (this.closed) return;
    this.setup.signal?.removeEventListener("abort", this.left);
    this.heldFor(); // a candidate waiting for the hold sees the session over
    await super.finish(outcome, close);
    if (this.transcript) this.answer(this.transcript);
    else this.refuse(outcome === "client_left" ? this.setup.signal?.reason : (this.failure ?? new ApiError("upstream_error", "no provider could transcribe the file")));
  }

  /**
   * The whole file once transcribed. A client that left is billed what the provider had: nothing
   * before one was given the file, then the whole (a file API takes it whole) or, for a recognizer
   * fed a piece at a time, what it was fed. A failure or a refused hold bills nothing.
   */
  protected ending(outcome: Outcome): SessionEnding {
    const had = this.heardSeconds === undefined ? this.setup.seconds : Math.min(this.setup.seconds, billedSeconds(this.heardSeconds));
    const billed = outcome === "completed" ? this.setup.seconds : outcome === "client_left" && this.given ? had : 0;
    const status = outcome === "completed" || (outcome === "client_left" && this.given) ? "completed" : "failed";
    return { outcome, billed, status, latencyMs: performance.now() - this.t0, details: { seconds: this.setup.seconds } };
  }
}
