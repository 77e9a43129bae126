import type { Binding } from "../catalogue/types.ts";
import { ApiError, CLOSE, closeReason, ERRORS } from "../errors.ts";
import type { Payer } from "../ledger/meter.ts";
import { audioSeconds, billedSeconds } from "../ledger/usage.ts";
import type { Logger } from "../log.ts";
import { ProviderError, type SttEvent, type SttStream } from "../providers/types.ts";
import { admitSession, type Admission } from "./admission.ts";
import { IdleTimer } from "./idle-timer.ts";
import { openWithin, tryCandidates, type Attempt } from "./lifecycle/candidates.ts";
import { CreditGate } from "./lifecycle/credit-gate.ts";
import { failureOf, type Outcome, recordEnding, type SessionEnding } from "./lifecycle/ending.ts";
import { withRouterTurns } from "./router-turns.ts";
import type { SttCommand, SttSessionDeps, SttSessionEvent, SttSessionSetup } from "./stt-events.ts";

// A streaming STT session, independent of the surface that frames it. (Over 300 lines: one state
// machine whose admission, turn and billing rules read best together; the lifecycle rules live
// in lifecycle/.)
// - Audio is forwarded as it came (no resampling, no transcoding); audio sent while the session
//   is starting is kept and delivered in order once the provider is ready.
// - A turn id stays the same across a turn's interim and final transcripts and its commit, and
//   moves on after the commit.
// - Audio seconds received are paid for as they arrive (a credit hold, no database round trip
//   while the block lasts); when the balance runs dry, the audio already received is finalized
//   and the session ends with 4402. Usage is settled also when the client just goes away; the
//   audio received is noted to the meter as it comes (what a crash of the server is billed).
// - With an idle timeout, a session with no client frame (an empty binary frame is a keep-alive)
//   and no event sent for that long ends with 4408 `idle_timeout`, until the client closes it.

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
  private readonly gate: CreditGate<Uint8Array | SttCommand>;
  private exhausted = false;
  private closing = false;
  /** The client broke the frame contract (rather than the provider failing). */
  private endedByClient = false;
  private lastFinalEndMs = 0;
  private firstInputAt: number | undefined;
  private firstOutputAt: number | undefined;
  private readonly startedAt = new Date();
  private readonly attempts: Attempt[] = [];
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
    // Audio goes on only as far as the hold covers it; when it cannot grow, the audio waiting is dropped unbilled.
    this.gate = new CreditGate<Uint8Array | SttCommand>({
      usageWith: (item) => (item instanceof Uint8Array ? audioSeconds(this.admittedBytes + item.byteLength, this.setup.bytesPerSecond) : undefined),
      cover: (seconds) => this.admission!.meter.cover(this.binding ?? this.admission!.candidates[0], seconds),
      admit: (item) => {
        if (item instanceof Uint8Array) {
          this.admittedBytes += item.byteLength;
          this.admission!.meter.delivered(this.binding ?? this.admission!.candidates[0], this.receivedSeconds);
        }
        this.forward(item);
      },
      exhausted: () => this.exhaust(),
      failed: (err) => void this.fail(err),
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
    this.gate.push(frame);
  }

  command(cmd: SttCommand): void {
    if (this.closed || this.closing) return;
    this.idle.touch();
    if (cmd.type === "close") {
      this.closing = true;
      this.idle.stop();
    }
    // Commands keep their place behind audio still waiting for its credit hold.
    this.gate.push(cmd);
  }

  /** The client broke the frame contract: the session ends, and the audio it sent is paid for as on a close. */
  reject(message: string): void {
    this.endedByClient = true;
    void this.fail(new ApiError("invalid_stt_frame", message));
  }

  /** The client went away: stop, and bill the audio it sent. */
  abort(): void {
    if (this.closed) return;
    void this.finish("client_left", null);
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
    void this.finish("shutdown", { code: CLOSE.goingAway, reason: "server_shutdown" });
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
    this.admission = await admitSession(
      this.setup.admit,
      (err) => this.fail(err),
      () => this.closed,
      this.startedAt,
    );
    if (!this.admission) return;
    // Audio sent while the session was being admitted waits in the gate: it goes on as paid for.
    this.gate.start();
    await tryCandidates(
      this.admission.candidates,
      {
        connect: (binding) => this.idle.during(this.connect(binding)),
        serve: async (binding) => {
          await this.pump();
          if (this.closed) return;
          // A provider may only end the stream after the client closed the session.
          if (!this.closing) throw new ProviderError(`${binding.provider.id} ended the stream before the session was closed`, true);
          await this.complete();
        },
        // The audio a provider took is not kept to be sent again: only one that never connected is replaced.
        canMoveOn: () => !this.stream,
        moveOn: () => {},
        closed: () => this.closed,
        fail: (err) => this.fail(err),
      },
      this.attempts,
      this.log,
    );
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
      stream = await openWithin(opening, this.deps.connectTimeoutMs, binding.provider.id, (late) => late.cancel());
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
      return this.finish("cut_off", { code: ERRORS.insufficient_balance.close, reason: closeReason("insufficient_balance") });
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
    const { error, close } = failureOf(err, this.log);
    this.emit({ type: "error", code: error.code, message: error.message });
    await this.finish(this.endedByClient ? "client_left" : "failed", close);
  }

  /**
   * Ends the session once: stops the provider, settles usage, then sends the last event and
   * closes (`close` null: the client is gone). The audio received is billed, except when a
   * provider failed or the server ended the session: then up to the last final transcript, and
   * never more than was received.
   */
  private async finish(outcome: Outcome, close: { code: number; reason: string } | null, lastWords?: () => void): Promise<void> {
    if (this.closed) return;
    this.state = "closed";
    this.idle.stop();
    this.gate.stop();
    this.opening?.abort();
    this.stream?.cancel();
    // A client that broke the rules or went quiet, a cut-off that delivered nothing, and a failure are recorded as failed.
    const failed = outcome === "failed" || (outcome === "client_left" && close !== null) || (outcome === "cut_off" && this.admittedBytes === 0);
    const end: SessionEnding = {
      outcome,
      billed: outcome === "failed" ? Math.min(this.receivedSeconds, billedSeconds(this.lastFinalEndMs / 1000)) : this.receivedSeconds,
      status: failed ? "failed" : "completed",
      latencyMs: (this.firstOutputAt ?? performance.now()) - (this.firstInputAt ?? performance.now()),
      details: { admittedBytes: this.admittedBytes },
    };
    await recordEnding({ admission: this.admission, binding: this.binding, startedAt: this.startedAt, attempts: this.attempts }, end, this.deps, close, lastWords);
  }
}
