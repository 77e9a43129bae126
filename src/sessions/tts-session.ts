import type { Binding } from "../catalogue/types.ts";
import { ApiError, closeReason, type ErrorCode } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import { ProviderError, type TtsProvider, type TtsStream } from "../providers/types.ts";

// A streaming TTS session, independent of the surface that frames it. Commands arriving while the
// session is starting are kept and applied once a provider is ready. While no audio has reached
// the client, a provider that fails in a retryable way is replaced by the next candidate and the
// text so far is replayed; once audio has gone out, a failure ends the session with 1011.

export type TtsCommand = { type: "text"; text: string } | { type: "flush" } | { type: "close" };

/** The socket, as the session sees it. */
export interface TtsPort {
  sendEvent(event: Record<string, unknown>): void;
  /** Resolves when the client can take more audio (backpressure). */
  sendAudio(chunk: Uint8Array): void | Promise<void>;
  close(code: number, reason: string): void;
}

export interface TtsSessionSetup {
  id: string;
  candidates: Binding[];
  voice?: string;
  format: "pcm" | "mp3";
  autoFlush: boolean;
  options: Record<string, string>;
  /** Runs before any provider is contacted; an `ApiError` from it ends the session with its close code. */
  authorize: () => Promise<unknown>;
}

export interface TtsSessionDeps {
  provider: (id: string) => TtsProvider | undefined;
  port: TtsPort;
  log: Logger;
  metrics: Metrics;
  connectTimeoutMs: number;
  surface: string;
}

type State = "starting" | "ready" | "closed";

export class TtsSession {
  private state: State = "starting";
  private stream: TtsStream | undefined;
  private binding: Binding | undefined;
  /** Commands received while no provider was ready. */
  private pending: TtsCommand[] = [];
  /** Commands given to the current provider before any of its audio went out: replayed on fallback. */
  private replay: TtsCommand[] = [];
  /** With auto_flush off, text waits here for a flush or close. */
  private held = "";
  private readySent = false;
  private closeRequested = false;
  private audioStarted = false;
  private firstTextAt: number | undefined;
  private characters = 0;
  private audioBytes = 0;
  private readonly log: Logger;
  readonly finished: Promise<void>;

  constructor(
    private readonly setup: TtsSessionSetup,
    private readonly deps: TtsSessionDeps,
  ) {
    this.log = deps.log.child({ session: setup.id, channel: "tts" });
    this.finished = this.run();
  }

  private get closed(): boolean {
    return this.state === "closed";
  }

  /** A command from the client, in arrival order; anything after `close` is ignored. */
  command(cmd: TtsCommand): void {
    if (this.closed || this.closeRequested) return;
    if (cmd.type === "close") this.closeRequested = true;
    if (cmd.type === "text") {
      this.firstTextAt ??= performance.now();
      this.characters += [...cmd.text].length;
    }
    if (this.state === "starting") this.pending.push(cmd);
    else this.apply(cmd);
  }

  /** The client broke the frame contract (1003 / 1009). */
  reject(code: "invalid_tts_frame" | "tts_text_frame_too_large", message: string): void {
    this.fail(new ApiError(code, message));
  }

  /** The client went away: stop work, send nothing. */
  abort(): void {
    if (this.closed) return;
    this.state = "closed";
    this.stream?.cancel();
    this.log.info({ characters: this.characters }, "client closed the session");
    this.count("aborted");
  }

  /** The server is stopping and the grace period is over. */
  shutdown(): void {
    if (this.closed) return;
    this.deps.port.sendEvent({ type: "service.tts_error", code: "service_unavailable", message: "the server is shutting down" });
    this.end(1001, "server_shutdown", "shutdown");
  }

  private async run(): Promise<void> {
    try {
      await this.setup.authorize();
    } catch (err) {
      return this.fail(err);
    }
    const { candidates } = this.setup;
    for (let i = 0; i < candidates.length && !this.closed; i++) {
      const binding = candidates[i];
      const hasNext = i + 1 < candidates.length;
      try {
        await this.connect(binding);
        if (await this.pump()) return this.complete();
        return; // closed under us
      } catch (err) {
        if (this.closed) return;
        const retryable = err instanceof ProviderError && err.retryable && !this.audioStarted;
        this.status("failed", binding, (err as Error).message);
        this.stream?.cancel();
        this.stream = undefined;
        if (retryable && hasNext) {
          this.state = "starting";
          this.pending = [...this.replay, ...this.pending];
          this.replay = [];
          continue;
        }
        return this.fail(err instanceof ProviderError ? new ApiError("upstream_error", err.message) : err);
      }
    }
  }

  private async connect(binding: Binding): Promise<void> {
    const provider = this.deps.provider(binding.provider.id);
    if (!provider) throw new ProviderError(`provider ${binding.provider.id} has no adapter in this build`, true);
    this.status("connecting", binding);
    const opening = provider.open({ model: binding.id, voice: this.setup.voice, format: this.setup.format, options: this.setup.options });
    const stream = await withTimeout(opening, this.deps.connectTimeoutMs, `${binding.provider.id} did not accept the session in time`);
    if (this.closed) {
      stream.cancel();
      return;
    }
    this.binding = binding;
    this.stream = stream;
    this.status("connected", binding);
    if (!this.readySent) {
      this.readySent = true;
      this.deps.port.sendEvent({ type: "service.tts_session_ready", session_id: this.setup.id });
    }
    this.state = "ready";
    const queued = this.pending;
    this.pending = [];
    for (const cmd of queued) this.apply(cmd);
  }

  /** Drains the provider into the socket; true when the provider finished after `close`. */
  private async pump(): Promise<boolean> {
    for await (const ev of this.stream!) {
      if (this.closed) return false;
      if (ev.type === "flushed") {
        this.deps.port.sendEvent({ type: "service.tts_flushed" });
        continue;
      }
      if (!this.audioStarted) this.startAudio();
      this.audioBytes += ev.audio.byteLength;
      const backpressure = this.deps.port.sendAudio(ev.audio);
      if (backpressure) await backpressure;
    }
    return !this.closed;
  }

  private startAudio(): void {
    this.audioStarted = true;
    this.replay = [];
    const { audioFormat } = this.stream!;
    const provider = this.binding!.provider.id;
    if (this.firstTextAt !== undefined) {
      this.deps.metrics.timeToFirstAudio.observe({ provider }, (performance.now() - this.firstTextAt) / 1000);
    }
    this.deps.port.sendEvent({
      type: "service.tts_audio_started",
      provider,
      model: this.binding!.canonical,
      encoding: audioFormat.encoding,
      sample_rate: audioFormat.sampleRate,
      channels: audioFormat.channels,
    });
  }

  private apply(cmd: TtsCommand): void {
    const stream = this.stream!;
    if (!this.audioStarted) this.replay.push(cmd);
    if (cmd.type === "text") {
      if (this.setup.autoFlush) stream.write(cmd.text);
      else this.held += cmd.text;
      return;
    }
    if (this.held) {
      stream.write(this.held);
      this.held = "";
    }
    if (cmd.type === "flush") stream.flush();
    else stream.end();
  }

  private complete(): void {
    this.deps.port.sendEvent({
      type: "service.tts_session_ended",
      session_id: this.setup.id,
      provider: this.binding?.provider.id,
      model: this.binding?.canonical,
      characters: this.characters,
      audio_bytes: this.audioBytes,
    });
    this.end(1000, "tts_complete", "completed");
  }

  private fail(err: unknown): void {
    if (this.closed) return;
    const apiError = err instanceof ApiError ? err : new ApiError("upstream_error", (err as Error).message);
    if (!(err instanceof ApiError)) this.log.error({ err }, "session failed");
    else this.log.info({ code: apiError.code, reason: apiError.message }, "session ended with an error");
    this.deps.port.sendEvent({ type: "service.tts_error", code: apiError.code, message: apiError.message });
    this.end(apiError.closeCode, closeReason(apiError.code as ErrorCode), "failed");
  }

  private end(code: number, reason: string, outcome: string): void {
    this.state = "closed";
    this.stream?.cancel();
    this.deps.port.close(code, reason);
    this.log.info({ outcome, code, provider: this.binding?.provider.id, characters: this.characters, audioBytes: this.audioBytes }, "session closed");
    this.count(outcome);
  }

  private count(status: string): void {
    this.deps.metrics.requests.inc({ surface: this.deps.surface, provider: this.binding?.provider.id ?? "none", status });
  }

  private status(status: "connecting" | "connected" | "failed", binding: Binding, reason?: string): void {
    this.deps.port.sendEvent({ type: "service.tts_provider_status", provider: binding.provider.id, model: binding.canonical, status, ...(reason ? { reason } : {}) });
    if (status === "failed") this.log.warn({ provider: binding.provider.id, reason }, "provider attempt failed");
  }
}

function withTimeout<T extends { cancel(): void }>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new ProviderError(message, true));
      promise.then((late) => late.cancel(), () => {});
    }, ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
