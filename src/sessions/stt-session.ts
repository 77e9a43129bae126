import { AudioArrivals } from "./audio-arrivals.ts";
import type { Binding } from "../catalogue/types.ts";
import { familyKey } from "../routing/candidate.ts";
import { ApiError, CLOSE, ProviderError } from "../errors.ts";
import { audioSeconds, billedSeconds } from "../ledger/usage.ts";
import type { SttEvent, SttStream } from "../providers/stt-types.ts";
import { openWithin } from "./lifecycle/candidates.ts";
import type { Close, Outcome, SessionEnding } from "./lifecycle/ending.ts";
import { SessionCore } from "./lifecycle/session-core.ts";
import { withRouterTurns } from "./router-turns.ts";
import { joinAudio, TurnBatch } from "../util/turn-batch.ts";
import type { SttCommand, SttSessionDeps, SttSessionEvent, SttSessionSetup } from "./stt-events.ts";
import { inputConfig, routerTurnsOf, streamRequest } from "./stt-provider-settings.ts";
import { SttFailover } from "./stt-failover.ts";

// A streaming STT session, independent of the surface that frames it (the shared lifecycle: `SessionCore`).
// - Audio is forwarded as it came (no resampling, no transcoding; frames that arrive in one loop
//   turn go upstream as one message, `TurnBatch`); audio sent while the session is starting is
//   kept and delivered in order once the provider is ready.
// - A turn id stays the same across a turn's interim and final transcripts and its commit, then moves on.
// - Audio seconds received are paid for as they arrive (a credit hold, no database round trip
//   while the block lasts); when the balance runs dry, the audio already received is finalized
//   and the session ends with 4402. Usage is settled also when the client just goes away; the
//   audio received is noted to the meter as it comes (what a crash of the server is billed).
// - With an idle timeout, a session with no client frame (an empty binary frame is a keep-alive)
//   and no event sent for that long ends with 4408 `idle_timeout`, until the client closes it.
// - A provider that fails is replaced by the next candidate, also in the middle of the session:
//   what the client sent since the provider last settled it is said again (`SttFailover`).

/** A frame that broke the contract, in its place among the client's input: what came before it is paid for first. */
type Broken = { type: "broken"; message: string };
/** A recording's billed seconds, the gate's first item: held for whole before it is readied. */
type Whole = { type: "whole"; seconds: number };
type Input = Uint8Array | SttCommand | Broken | Whole;

export class SttSession extends SessionCore<Input, SttSessionSetup, SttSessionDeps> {
  private stream: SttStream | undefined;
  /** Audio on its way to the stream, gathered per loop turn. */
  private batch: TurnBatch<Uint8Array> | undefined;
  /** Aborted when the session ends while a provider is still opening for it. */
  private opening: AbortController | undefined;
  /** The input kept for the next provider: also what waits while one is opening. */
  private readonly failover: SttFailover;
  private turn = 1;
  /** Audio the hold covered and that went on (the billed amount). */
  private admittedBytes = 0;
  private lastFinalEndMs = 0;
  private firstInputAt: number | undefined;
  private firstOutputAt: number | undefined;
  private readonly arrivals: AudioArrivals;
  /** A recording is held for whole (or the session is over). */
  private readonly held: Promise<void>;
  private heldFor!: () => void;
  private wholeHeld = false;

  constructor(setup: SttSessionSetup, deps: SttSessionDeps) {
    super(setup, deps, { channel: "stt", quiet: "no frame from the client and no event" });
    this.arrivals = new AudioArrivals(setup.bytesPerSecond);
    this.failover = new SttFailover(setup.bytesPerSecond, setup.bytesPerSecond / setup.sampleRate);
    this.held = new Promise((resolve) => (this.heldFor = resolve));
    if (setup.recording) this.gate.push({ type: "whole", seconds: setup.recording.seconds });
  }

  /** A binary frame from the client: audio exactly as sent. */
  audio(frame: Uint8Array): void {
    if (this.closed || this.closing || this.exhausted) return;
    this.idle.touch();
    if (!frame.byteLength) return; // a keep-alive: providers may read an empty frame as the end of audio
    this.firstInputAt ??= performance.now();
    if (!this.setup.recording) this.arrivals.arrived(frame.byteLength);
    this.gate.push(frame);
  }

  /**
   * Audio not yet gone out to the provider: gathered for the turn's message, waiting behind a
   * replay, or in the stream's socket; while the next provider opens, all that is kept for it.
   * (A recording, fed once the session started, is held for whole: none waits at the gate.)
   */
  get bufferedAmount(): number {
    return this.state === "ready" ? this.unsent + this.failover.waitingBytes : this.failover.keptBytes;
  }

  /** Audio given to the provider that has not yet gone out. */
  private get unsent(): number {
    return (this.batch?.gathered ?? 0) + (this.stream?.bufferedAmount ?? 0);
  }

  /** A command from the client: it keeps its place behind audio still waiting for its credit hold. */
  command(cmd: SttCommand): void {
    this.receive(cmd, cmd.type === "close");
  }

  /**
   * The client broke the frame contract: the session ends once the input before the frame has gone
   * through, and the audio it sent is paid for as on a close. Nothing after it is taken.
   */
  reject(message: string): void {
    if (this.closed || this.closing) return;
    this.endedByClient = true;
    this.receive({ type: "broken", message }, true);
  }

  /** The client went away: stop, and bill the audio it sent. Resolves once that is settled. */
  abort(): Promise<void> {
    return this.finish("client_left", null);
  }

  /** Input for the provider: kept, then sent (while none is ready, the kept input waits for one). */
  private forward(item: Uint8Array | SttCommand): void {
    this.failover.keep(item);
    if (this.state === "ready" && !this.failover.queued(item)) this.send(item);
  }

  private send(item: Uint8Array | SttCommand): void {
    if (item instanceof Uint8Array) return this.batch!.push(item);
    this.batch!.flush();
    const stream = this.stream!;
    if (item.type === "commit") stream.commit();
    else if (item.type === "clear") stream.clear();
    else stream.end();
  }

  protected usageWith(item: Input): number | undefined {
    if (item instanceof Uint8Array) return audioSeconds(this.admittedBytes + item.byteLength, this.setup.bytesPerSecond);
    return item.type === "whole" ? item.seconds : undefined;
  }

  /** Audio goes on only as far as the hold covers it; when it cannot grow, the audio waiting is dropped unbilled. */
  protected admit(item: Input): void {
    if (!(item instanceof Uint8Array) && item.type === "broken") return void this.fail(new ApiError("invalid_stt_frame", item.message));
    if (!(item instanceof Uint8Array) && item.type === "whole") {
      this.wholeHeld = true;
      this.heldFor();
      return this.setup.recording!.held();
    }
    if (item instanceof Uint8Array) {
      this.admittedBytes += item.byteLength;
      this.admission!.meter.delivered(this.binding ?? this.admission!.candidates[0], this.receivedSeconds);
    }
    this.forward(item);
  }

  /** The balance cannot pay for more audio: finalize what came, then end with 4402. */
  protected exhaust(): void {
    if (this.exhausted) return;
    this.exhausted = true;
    const recording = this.setup.recording;
    if (recording && !this.wholeHeld) return void this.cutOff(`the balance cannot pay for ${recording.seconds} s of audio`);
    this.closing = true;
    this.log.info({ admittedBytes: this.admittedBytes }, "balance exhausted during the session");
    this.forward({ type: "close" });
  }

  private emit(event: SttSessionEvent): void {
    this.idle.touch();
    this.deps.port.event(event);
  }

  /** A recording is held for whole, then readied (decoded), before any provider is opened; one it cannot stream is handed on. */
  protected override async prepare(): Promise<boolean> {
    const recording = this.setup.recording;
    if (!recording) return true;
    await this.held;
    if (this.closed) return false;
    if (await recording.ready()) return true;
    if (!this.closed) this.handOver();
    return false;
  }

  protected candidateRun() {
    return {
      connect: (binding: Binding) => this.idle.during(this.connect(binding)),
      serve: async (binding: Binding, served: () => void) => {
        served(); // accepted: a recognizer has nothing to say before it hears speech
        await this.pump();
        if (this.closed) return;
        // A provider may only end the stream after the client closed the session.
        if (!this.closing) throw new ProviderError(`${binding.provider.id} ended the stream before the session was closed`, true);
        await this.complete();
      },
      // Also mid-session: the next provider is given the input kept since the last final.
      canMoveOn: () => true,
      moveOn: () => this.letGo(),
      attemptFailed: (_binding: Binding, reason: string) => this.failover.failed(reason),
    };
  }

  private async connect(binding: Binding): Promise<void> {
    const provider = this.deps.provider(binding.provider.id);
    if (!provider?.open) throw new ProviderError(`provider ${binding.provider.id} has no streaming adapter in this build`, true);
    const family = this.setup.families.get(familyKey(binding.provider.id, binding.canonical))!;
    const interim = this.setup.interim ?? family.interimDefault;
    const { routerTurns, vadInside } = routerTurnsOf(this.setup, family);
    const abandon = (this.opening = new AbortController());
    const opening = provider.open(streamRequest(this.setup, binding.id, family, interim, abandon.signal));
    let stream: SttStream;
    try {
      stream = await openWithin(opening, this.deps.connectTimeoutMs, provider, (late) => late.cancel());
    } catch (err) {
      abandon.abort(); // given up (timed out): the opening lets go of what it took or waits for
      throw err;
    } finally {
      this.opening = undefined;
    }
    if (routerTurns && !vadInside) {
      stream = withRouterTurns(stream, this.deps.vadLanes, { rate: this.setup.sampleRate, vad: this.setup.vad, autoCommit: this.setup.commitStrategy === "auto", scores: this.setup.vadScores });
    }
    await this.admission!.meter.reserved();
    if (this.closed) return stream.cancel();
    // The binding that served before closes its part on the meter (the audio up to its last final);
    // the audio received after it is the new one's, noted at once: a crash before more audio bills it.
    if (this.binding) this.admission!.meter.partServed(this.binding, Math.min(this.receivedSeconds, billedSeconds(this.lastFinalEndMs / 1000)));
    if (this.binding) this.admission!.meter.delivered(binding, this.receivedSeconds);
    this.binding = binding;
    this.stream = stream;
    this.batch = new TurnBatch<Uint8Array>((audio) => stream.send(audio), joinAudio, Math.max(640, Math.floor(this.setup.bytesPerSecond / 4)));
    this.state = "ready";
    const served = { provider: binding.provider.id, model: binding.canonical, input: inputConfig(this.setup, family, interim) };
    // The event goes first: the replay may take the session to its end at once (a kept close).
    const switched = this.failover.switching();
    this.emit(switched ? { type: "switched", ...served, ...switched } : { type: "started", sessionId: this.setup.id, ...served });
    this.failover.resume(binding, this.admission!.candidates, { send: (item) => this.send(item), unsent: () => this.unsent }, family.realtimeInput ?? false);
  }

  /** The provider is let go (the input kept stays for the next, unless the session is over). */
  private letGo(): void {
    if (!this.closed) this.state = "starting";
    this.failover.stop();
    this.batch?.drop();
    this.stream?.cancel();
    this.stream = undefined;
  }

  private async pump(): Promise<void> {
    for await (const ev of this.stream!) {
      if (this.closed) return;
      this.relay(ev);
    }
  }

  /** A provider event, tagged with its turn; a commit or clear ends the turn. */
  private relay(raw: SttEvent): void {
    const ev = this.failover.heard(raw);
    if (ev.type === "transcript") {
      const now = performance.now();
      this.firstOutputAt ??= now;
      if (ev.final) this.lastFinalEndMs = ev.endMs;
      const heard = this.arrivals.arrivalOf(ev.endMs);
      if (heard !== undefined) this.deps.metrics.sttEventLatency.observe({ provider: this.binding?.provider.id ?? "none", kind: ev.final ? "final" : "interim" }, (now - heard) / 1000);
    }
    this.emit({ ...ev, turnId: `turn_${this.turn}` });
    if (ev.type === "committed" || ev.type === "cleared") this.turn++;
  }

  private get receivedSeconds(): number {
    return audioSeconds(this.admittedBytes, this.setup.bytesPerSecond);
  }

  private async complete(): Promise<void> {
    if (this.exhausted) return this.cutOff("the balance is used up; the audio received before was transcribed");
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

  protected sendError(error: ApiError): void {
    this.emit({ type: "error", code: error.code, message: error.message });
  }

  protected stopWork(): void {
    this.heldFor(); // a recording waiting for its hold sees the session over
    this.opening?.abort();
    this.letGo();
  }

  /**
   * The audio received is billed, except when a provider failed or the server ended the session:
   * then up to the last final transcript, and never more than was received.
   */
  protected ending(outcome: Outcome, close: Close | null): SessionEnding {
    // A client that broke the rules or went quiet, a cut-off that delivered nothing, a failure, and a
    // recording that ended before any of it was given are recorded as failed.
    const unfed = this.setup.recording !== undefined && this.admittedBytes === 0;
    const failed = outcome === "failed" || (outcome === "client_left" && close !== null) || (outcome !== "completed" && unfed) || (outcome === "cut_off" && this.admittedBytes === 0);
    return {
      outcome,
      billed: outcome === "failed" ? Math.min(this.receivedSeconds, billedSeconds(this.lastFinalEndMs / 1000)) : this.receivedSeconds,
      status: failed ? "failed" : "completed",
      latencyMs: (this.firstOutputAt ?? performance.now()) - (this.firstInputAt ?? performance.now()),
      details: { admittedBytes: this.admittedBytes, served: this.failover.served, keptAudioDropped: this.failover.droppedBytes || undefined },
    };
  }
}
