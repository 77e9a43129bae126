import type { VadOptions } from "../audio/vad.ts";
import type { Binding } from "../catalogue/types.ts";
import { ApiError, CLOSE, closeReason, ERRORS, type ErrorCode, sessionFailure } from "../errors.ts";
import type { Payer } from "../ledger/meter.ts";
import { audioSeconds, billedSeconds } from "../ledger/usage.ts";
import type { Logger } from "../log.ts";
import { ProviderError, type SttAudioFormat, type SttEvent, type SttFamily, type SttProvider, type SttStream } from "../providers/types.ts";
import { withTimeout } from "../util/timeout.ts";
import { admitSession, cutOffStatus, type Admission, type SessionDeps } from "./admission.ts";
import { IdleTimer } from "./idle-timer.ts";
import { withRouterTurns, type VadLanes } from "./router-turns.ts";
import type { SttCommand, SttPort, SttSessionEvent } from "./stt-events.ts";

// A streaming STT session, independent of the surface that frames it.
// - Audio is forwarded as it came (no resampling, no transcoding); audio sent while the session
//   is starting is kept and delivered in order once the provider is ready.
// - Every event gets a stable id and a gapless sequence number; a turn id stays the same across
//   a turn's interim and final transcripts and its commit, and moves on after the commit.
// - Audio seconds received are paid for as they arrive (a credit hold, no database round trip
//   while the block lasts); when the balance runs dry, the audio already received is finalized
//   and the session ends with 4402. Usage is settled also when the client just goes away; the
//   audio received is noted to the meter as it comes (what a crash of the server is billed).
// - With an idle timeout, a session with no client frame (an empty binary frame is a keep-alive)
//   and no event sent for that long ends with 4408 `idle_timeout`, until the client closes it.

/** A session's audio, turn and option settings, as planned from its query. */
export interface SttSessionParams {
  families: Map<string, SttFamily>;
  audioFormat: SttAudioFormat;
  sampleRate: number;
  channels: number;
  bytesPerSecond: number;
  language?: string;
  /** Explicit `interim_results`, or undefined for the family's default. */
  interim?: boolean;
  commitStrategy: "auto" | "manual";
  turnDetection: "auto" | "acoustic" | "semantic";
  vad: VadOptions;
  /** The portable options given explicitly, with their values. */
  portable: import("../providers/types.ts").PortableValues;
  options: Record<string, string>;
}

export interface SttSessionSetup extends SttSessionParams {
  id: string;
  admit: () => Promise<Admission>;
  /** See `IdleTimer`; 0 or absent for none. */
  idleTimeoutMs?: number;
}

export interface SttSessionDeps extends SessionDeps<SttProvider, SttPort> {
  /** Where the router VAD runs, for families without a turn detector. */
  vadLanes: VadLanes;
}

export class SttSession {
  private state: "starting" | "ready" | "closed" = "starting";
  private stream: SttStream | undefined;
  /** Aborted when the session ends while a provider is still opening for it. */
  private opening: AbortController | undefined;
  private binding: Binding | undefined;
  private admission: Admission | undefined;
  private pending: (Uint8Array | SttCommand)[] = [];
  private turn = 1;
  /** Audio the hold covered and that went on (the billed amount). */
  private admittedBytes = 0;
  /** Client frames in arrival order, waiting for the hold to cover the audio among them. */
  private inbox: (Uint8Array | SttCommand)[] = [];
  private coveredSeconds = 0;
  private covering = false;
  private exhausted = false;
  private closing = false;
  /** The client broke the frame contract (rather than the provider failing). */
  private endedByClient = false;
  private lastFinalEndMs = 0;
  private firstInputAt: number | undefined;
  private firstOutputAt: number | undefined;
  private readonly startedAt = new Date();
  private readonly attempts: { provider: string; reason: string }[] = [];
  private readonly log: Logger;
  private readonly idle: IdleTimer;
  readonly finished: Promise<void>;

  constructor(
    private readonly setup: SttSessionSetup,
    private readonly deps: SttSessionDeps,
  ) {
    this.log = deps.log.child({ session: setup.id, channel: "stt" });
    const idleMs = setup.idleTimeoutMs ?? 0;
    this.idle = new IdleTimer(idleMs, () => {
      this.endedByClient = true; // the audio it sent is paid for, as on a close
      void this.fail(new ApiError("idle_timeout", `no frame from the client and no event for ${idleMs / 1000} s`));
    });
    this.finished = this.run();
  }

  /** Who pays for the session, once admitted. */
  get payer(): Payer | undefined {
    return this.admission?.meter.payer;
  }

  private get closed() {
    return this.state === "closed";
  }

  /** A binary frame from the client: audio exactly as sent. */
  audio(frame: Uint8Array): void {
    if (this.closed || this.closing || this.exhausted) return;
    this.idle.touch();
    if (!frame.byteLength) return; // a keep-alive: providers may read an empty frame as the end of audio
    this.firstInputAt ??= performance.now();
    this.inbox.push(frame);
    this.admitAudio();
  }

  /**
   * Lets audio through only as far as the credit hold covers it, in order: without a database
   * round trip while the current block lasts; frames wait while the hold grows; when it cannot,
   * the waiting audio is dropped unbilled and the session ends with 4402.
   */
  private admitAudio(): void {
    while (this.admission && !this.covering && !this.exhausted && this.inbox.length) {
      const frame = this.inbox[0];
      if (!(frame instanceof Uint8Array)) {
        this.inbox.shift();
        this.forward(frame);
        continue;
      }
      const seconds = audioSeconds(this.admittedBytes + frame.byteLength, this.setup.bytesPerSecond);
      if (seconds > this.coveredSeconds) {
        const covered = this.admission.meter.cover(this.binding ?? this.admission.candidates[0], seconds);
        if (covered === false) return this.exhaust();
        if (covered !== true) {
          this.covering = true;
          covered.then(
            (ok) => {
              this.covering = false;
              if (this.closed) return;
              if (!ok) return this.exhaust();
              this.coveredSeconds = Math.max(this.coveredSeconds, seconds);
              this.admitAudio();
            },
            (err) => void this.fail(err),
          );
          return;
        }
        this.coveredSeconds = seconds;
      }
      this.inbox.shift();
      this.admittedBytes += frame.byteLength;
      this.admission.meter.delivered(this.binding ?? this.admission.candidates[0], this.receivedSeconds);
      this.forward(frame);
    }
  }

  command(cmd: SttCommand): void {
    if (this.closed || this.closing) return;
    this.idle.touch();
    if (cmd.type === "close") {
      this.closing = true;
      this.idle.stop();
    }
    // Commands keep their place behind audio still waiting for its credit hold.
    this.inbox.push(cmd);
    this.admitAudio();
  }

  /** The client broke the frame contract: the session ends, and the audio it sent is paid for as on a close. */
  reject(message: string): void {
    this.endedByClient = true;
    void this.fail(new ApiError("invalid_stt_frame", message));
  }

  /** The client went away: stop, and bill the audio it sent. */
  abort(): void {
    if (this.closed) return;
    void this.finish("completed", null);
  }

  /**
   * The server ends the session (its key was revoked, its tenant disabled): billed as when a
   * provider fails, up to the last final transcript the client got.
   */
  end(err: ApiError): void {
    void this.fail(err);
  }

  shutdown(): void {
    if (this.closed) return;
    this.emit({ type: "error", code: "service_unavailable", message: "the server is shutting down" });
    void this.finish("completed", { code: CLOSE.goingAway, reason: "server_shutdown" });
  }

  private forward(item: Uint8Array | SttCommand): void {
    if (this.state !== "ready") return void this.pending.push(item);
    const stream = this.stream!;
    if (item instanceof Uint8Array) return stream.send(item);
    if (item.type === "commit") stream.commit();
    else if (item.type === "clear") stream.clear();
    else stream.end();
  }

  /** The balance cannot pay for more audio: finalize what came, then end with 4402. */
  private exhaust(): void {
    if (this.exhausted) return;
    this.inbox = []; // not forwarded, not billed
    this.exhausted = true;
    this.closing = true;
    this.log.info({ admittedBytes: this.admittedBytes }, "balance exhausted during the session");
    this.forward({ type: "close" });
  }

  private emit(event: SttSessionEvent): void {
    this.idle.touch();
    this.deps.port.event(event);
  }

  private async run(): Promise<void> {
    this.admission = await admitSession(this.setup.admit, (err) => this.fail(err), () => this.closed, this.startedAt);
    if (!this.admission) return;
    // Audio sent while the session was being admitted waits in the inbox: it goes on as paid for.
    this.admitAudio();
    const { candidates } = this.admission;
    for (let i = 0; i < candidates.length && !this.closed; i++) {
      const binding = candidates[i];
      try {
        await this.idle.during(this.connect(binding));
      } catch (err) {
        if (this.closed) return;
        this.attempts.push({ provider: binding.provider.id, reason: (err as Error).message });
        this.log.warn({ provider: binding.provider.id, reason: (err as Error).message }, "provider attempt failed");
        if (err instanceof ProviderError && err.retryable && i + 1 < candidates.length) continue;
        return this.fail(err);
      }
      try {
        await this.pump();
        if (this.closed) return;
        // A provider may only end the stream after the client closed the session.
        if (!this.closing) throw new ProviderError(`${binding.provider.id} ended the stream before the session was closed`, true);
        await this.complete();
      } catch (err) {
        await this.fail(err);
      }
      return;
    }
  }

  private async connect(binding: Binding): Promise<void> {
    const provider = this.deps.provider(binding.provider.id);
    if (!provider?.open) throw new ProviderError(`provider ${binding.provider.id} has no streaming adapter in this build`, true);
    const family = this.setup.families.get(binding.provider.id)!;
    const interim = this.setup.interim ?? family.interimDefault;
    // The router VAD reads only declared little-endian PCM.
    const routerTurns = family.turnDetector === "none" && this.setup.audioFormat.startsWith("pcm");
    const abandon = (this.opening = new AbortController());
    const opening = provider.open({
      model: binding.id,
      audioFormat: this.setup.audioFormat,
      channels: this.setup.channels,
      language: this.setup.language,
      interim,
      commitStrategy: this.setup.commitStrategy,
      turnDetection: this.setup.turnDetection,
      routerVad: routerTurns && family.routerVadInside ? this.setup.vad : undefined,
      portable: this.setup.portable,
      options: this.setup.options,
      signal: abandon.signal,
    });
    let stream: SttStream;
    try {
      stream = await withTimeout(opening, this.deps.connectTimeoutMs, `${binding.provider.id} did not accept the session in time`, (late) => late.cancel());
    } catch (err) {
      abandon.abort(); // given up (timed out): the opening lets go of what it took or waits for
      throw err;
    } finally {
      this.opening = undefined;
    }
    if (routerTurns && !family.routerVadInside) {
      stream = withRouterTurns(stream, this.deps.vadLanes, { rate: this.setup.sampleRate, vad: this.setup.vad, autoCommit: this.setup.commitStrategy === "auto" });
    }
    await this.admission!.meter.reserved();
    if (this.closed) return stream.cancel();
    this.binding = binding;
    this.stream = stream;
    this.state = "ready";
    this.emit({
      type: "started",
      sessionId: this.setup.id,
      provider: binding.provider.id,
      model: binding.canonical,
      input: {
        audioFormat: this.setup.audioFormat,
        sampleRate: this.setup.sampleRate,
        channels: this.setup.channels,
        language: this.setup.language ?? null,
        interimResults: interim,
        commitStrategy: this.setup.commitStrategy,
        turnDetection: this.setup.turnDetection === "auto" ? family.turnStyles[0] : this.setup.turnDetection,
        turnDetector: family.turnDetector === "none" ? "router_vad" : "provider",
      },
    });
    const queued = this.pending;
    this.pending = [];
    for (const item of queued) this.forward(item);
  }

  private async pump(): Promise<void> {
    for await (const ev of this.stream!) {
      if (this.closed) return;
      this.relay(ev);
    }
  }

  /** A provider event, tagged with its turn; a commit or clear ends the turn. */
  private relay(ev: SttEvent): void {
    if (ev.type === "transcript") {
      this.firstOutputAt ??= performance.now();
      if (ev.final) this.lastFinalEndMs = ev.endMs;
    }
    this.emit({ ...ev, turnId: `turn_${this.turn}` });
    if (ev.type === "committed" || ev.type === "cleared") this.turn++;
  }

  private get receivedSeconds(): number {
    return audioSeconds(this.admittedBytes, this.setup.bytesPerSecond);
  }

  private async complete(): Promise<void> {
    if (this.exhausted) {
      this.emit({ type: "error", code: "insufficient_balance", message: "the balance is used up; the audio received before was transcribed" });
      return this.finish(cutOffStatus(this.admittedBytes), { code: ERRORS.insufficient_balance.close, reason: closeReason("insufficient_balance") });
    }
    await this.finish("completed", { code: CLOSE.normal, reason: "stt_complete" }, () =>
      this.emit({
        type: "ended",
        sessionId: this.setup.id,
        provider: this.binding?.provider.id,
        model: this.binding?.canonical,
        audioMs: Math.round((this.admittedBytes / this.setup.bytesPerSecond) * 1000),
        billedSeconds: this.receivedSeconds,
      }),
    );
  }

  private async fail(err: unknown): Promise<void> {
    if (this.closed) return;
    const apiError = sessionFailure(err);
    if (!(err instanceof ApiError || err instanceof ProviderError)) this.log.error({ err }, "session failed");
    this.emit({ type: "error", code: apiError.code, message: apiError.message });
    await this.finish("failed", { code: apiError.closeCode, reason: closeReason(apiError.code as ErrorCode) });
  }

  /**
   * Ends the session once: stops the provider, settles usage (all audio received when it
   * completed or the client left or broke the rules; up to the last final transcript, and never
   * more than was received, when the provider failed),
   * then sends the last event and closes (unless the client is gone).
   */
  private async finish(status: "completed" | "failed", close: { code: number; reason: string } | null, lastWords?: () => void): Promise<void> {
    if (this.closed) return;
    this.state = "closed";
    this.idle.stop();
    this.opening?.abort();
    this.stream?.cancel();
    const seconds = status === "completed" || this.endedByClient ? this.receivedSeconds : Math.min(this.receivedSeconds, billedSeconds(this.lastFinalEndMs / 1000));
    if (this.admission) {
      await this.admission.meter
        .settle({
          binding: this.binding ?? this.admission.candidates[0],
          status,
          units: seconds,
          startedAt: this.startedAt,
          latencyMs: (this.firstOutputAt ?? performance.now()) - (this.firstInputAt ?? performance.now()),
          attempts: this.attempts,
        })
        .catch(() => {}); // logged by the meter with everything needed to bill it by hand
    }
    lastWords?.();
    if (close) this.deps.port.close(close.code, close.reason);
    const outcome = close ? (status === "completed" ? "completed" : "failed") : "aborted";
    this.log.info({ outcome, provider: this.binding?.provider.id, admittedBytes: this.admittedBytes, seconds }, "session closed");
    this.deps.metrics.requests.inc({ surface: this.deps.surface, provider: this.binding?.provider.id ?? "none", status: outcome });
  }
}
