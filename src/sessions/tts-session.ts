import { ApiError, CLOSE, ProviderError } from "../errors.ts";
import { characters } from "../ledger/usage.ts";
import type { TtsEvent, TtsStream } from "../providers/types.ts";
import { CachePlays } from "./tts-cache/cache-plays.ts";
import { type Candidate, voiceOf } from "../routing/candidate.ts";
import { AlignmentTimeline } from "./tts-alignment.ts";
import { TextTally } from "./tts-text-tally.ts";
import { TtsFailover } from "./tts-failover.ts";
import { TtsAudioOut } from "./tts-audio-out.ts";
import { TtsCommandsIn } from "./tts-commands-in.ts";
import { TtsEventsOut } from "./tts-events-out.ts";
import { openTts } from "./tts-open.ts";
import type { Admission } from "./admission.ts";
import type { Outcome, SessionEnding } from "./lifecycle/ending.ts";
import { SessionCore } from "./lifecycle/session-core.ts";
import type { TtsCommand, TtsSessionDeps, TtsSessionSetup } from "./tts-events.ts";

// A streaming TTS session, independent of the surface that frames it (the lifecycle every kind
// shares is `SessionCore`; the character tally is `TextTally`; the commands on their way to the
// provider, `TtsCommandsIn`; what a failover replays, `TtsFailover`;
// how a candidate's stream is opened, `openTts`; what the cache played across candidates, `CachePlays`).
// - Text is admitted once the credit hold covers it; when the balance cannot cover more, the
//   admitted text is spoken and the session ends 4402 `insufficient_balance`. Commands arriving
//   while the session is starting are applied once a provider is ready.
// - A provider failing in a retryable way is replaced by the next candidate: before any audio the
//   admitted text is replayed to it; after, the text from the start of the sentence whose audio had
//   not ended, its audio continuing the stream, each part billed to its provider. With no candidate
//   left, the session ends 1011.
// - Usage is settled before the final event and close. Until then the meter is told, as audio goes
//   out, what a crash of the server is billed: the text the provider had been given when its
//   latest audio was sent (held back in its stream, `TtsStream.given`, it is not).
// - With an idle timeout, no client frame and nothing sent for that long (audio waiting for the
//   client to read does not count) ends the session with 4408 `idle_timeout`.

export class TtsSession extends SessionCore<TtsCommand, TtsSessionSetup, TtsSessionDeps> {
  private stream: TtsStream | undefined;
  /** What the next candidate is given when the current one fails. */
  private readonly failover = new TtsFailover();
  private audioStarted = false;
  /** A send of audio taken as it arrived (`takeNow`) that waits for the client: the pump awaits it before the next event. */
  private sending: Promise<void> | undefined;
  /** Tells the candidate's health that it serves (its first audio). */
  private served: (() => void) | undefined;
  private firstTextAt: number | undefined;
  private firstAudioAt: number | undefined;
  private readonly text = new TextTally();
  private readonly commands = new TtsCommandsIn(this.text, this.failover, this.setup.autoFlush);
  private readonly alignment = new AlignmentTimeline();
  private readonly out = new TtsAudioOut(this.deps.port, this.idle, () => this.closed);
  private readonly events = new TtsEventsOut(this.deps.port, this.setup);
  /** Stopped by a barge-in: what was spoken is what the listener wanted, so the record is `completed`. */
  private interrupted = false;
  private readonly cache = new CachePlays(this.deps.ttsCache);

  constructor(setup: TtsSessionSetup, deps: TtsSessionDeps) {
    super(setup, deps, { channel: "tts", quiet: "no frame from the client and nothing to send" });
  }

  /** A command from the client, in arrival order; anything after `close` is ignored. */
  command(cmd: TtsCommand): void {
    if (this.receive(cmd, cmd.type === "close") && cmd.type === "text") this.firstTextAt ??= performance.now();
  }

  /** The client broke the frame contract (1003 / 1009): it ends the session as if it had left. */
  reject(code: "invalid_tts_frame" | "tts_text_frame_too_large", message: string): void {
    this.endedByClient = true;
    void this.fail(new ApiError(code, message));
  }

  /** The client went away: stop work, send nothing, bill the text the provider was given once audio began. */
  abort(): void {
    if (this.closed) return;
    this.endedByClient = true;
    this.log.info({ characters: this.text.admitted }, "client closed the session");
    void this.finish("client_left", null);
  }

  /**
   * The listener talked over the speech (a realtime barge-in): generation stops now, billed as for
   * a client that left (the text the provider was given once audio began), then `ended` with that
   * count and a normal close `tts_interrupted`.
   */
  interrupt(): void {
    if (this.closed) return;
    this.endedByClient = true;
    this.interrupted = true;
    const billed = this.text.billed("client_left", this.audioStarted, this.stream?.given);
    void this.finish("client_left", { code: CLOSE.normal, reason: "tts_interrupted" }, () => this.events.ended(this.binding, billed, this.out.bytes));
  }

  protected candidateRun() {
    return {
      connect: (binding: Candidate) => this.idle.during(this.connect(binding)),
      serve: async (_binding: Candidate, served: () => void) => {
        this.served = served;
        if (await this.pump()) await this.complete();
      },
      canMoveOn: () => true,
      moveOn: () => {
        this.cache.movingOn();
        this.stream?.cancel();
        this.stream = undefined;
        this.state = "starting";
        const { from, commands } = this.failover.replay(this.text.heard, this.binding, this.audioStarted);
        this.commands.replay(commands);
        this.text.resumeAt(from);
        this.alignment.drop(this.audioStarted ? this.failover.seconds(this.out.bytes) : 0);
      },
      attemptFailed: (binding: Candidate, reason: string) => this.events.status("failed", binding, reason),
    };
  }

  /** The voice goes into the activity record (src/voices/voice-metrics.ts counts uses): the first candidate's, an operator's alias as the voice it stands for. */
  protected override admitted(admission: Admission): void {
    admission.meter.forVoice(admission.candidates[0] ? voiceOf(admission.candidates[0], this.setup.voice) : this.setup.voice);
  }

  protected usageWith(cmd: TtsCommand): number | undefined {
    return cmd.type === "text" ? this.text.admitted + characters(cmd.text) : undefined;
  }

  protected admit(cmd: TtsCommand, units: number | undefined): void {
    if (units !== undefined) this.text.admitted = units;
    this.accept(cmd);
  }

  /** The balance cannot pay for more text: speak what was admitted, then end with 4402. */
  protected exhaust(): void {
    if (this.exhausted) return;
    this.exhausted = true;
    this.log.info({ characters: this.text.admitted }, "balance exhausted during the session");
    this.closing = true;
    if (!this.commands.closeAccepted) this.accept({ type: "close" });
  }

  /** An admitted command goes to the provider's stream, or waits for one while the session starts. */
  private accept(cmd: TtsCommand): void {
    this.commands.accept(cmd, this.state === "starting" ? undefined : this.stream);
  }

  private async connect(binding: Candidate): Promise<void> {
    const provider = this.deps.provider(binding.provider.id);
    // The first attempt, on the model asked for, is told only by `ready` or its `failed` (docs/tts-websocket.md).
    const told = this.tried !== undefined || binding.fallback !== undefined;
    this.tried = binding;
    if (!provider) throw new ProviderError(`provider ${binding.provider.id} has no adapter in this build`, true);
    if (told) this.events.status("connecting", binding);
    const { stream, cached, voice } = await openTts(provider, binding, this.setup, this.admission!, this.deps);
    await this.admission!.meter.reserved();
    if (this.closed) {
      stream.cancel();
      return;
    }
    this.failover.takeOver(stream, binding, this.admission!.meter, voice, this.cache.beforeCurrent());
    this.binding = binding;
    this.stream = stream;
    this.cache.serving(cached);
    // The record names the voice that serves (a fallback model speaks in its own).
    this.admission!.meter.forVoice(voice);
    // What the session says on becoming ready, and what the commands it kept send at once, go out in one write.
    this.out.together(() => this.becomeReady(told, binding));
  }

  private becomeReady(told: boolean, binding: Candidate): void {
    if (told) this.events.status("connected", binding);
    this.events.ready();
    this.state = "ready";
    this.commands.giveKept(this.stream!);
  }

  /** Drains the provider into the socket; true when the provider finished after `close`. */
  private async pump(): Promise<boolean> {
    const stream = this.stream!;
    stream.offerTo?.((ev) => this.takeNow(ev));
    try {
      return await this.drain(stream);
    } finally {
      stream.offerTo?.(undefined);
    }
  }

  private async drain(stream: TtsStream): Promise<boolean> {
    for await (const ev of stream) {
      if (this.sending) await this.sent();
      if (this.closed) return false;
      this.idle.touch();
      if (ev.type === "spoken") {
        this.text.spoken(ev.chars);
        this.failover.heard(this.text.heard);
        continue;
      }
      if (ev.type === "flushed") {
        this.text.flushAnswered();
        this.failover.flushAnswered();
        this.failover.heard(this.text.heard);
        this.noteDelivered();
        await this.out.send(this.failover.rest());
        this.deps.port.event({ type: "flushed" });
        continue;
      }
      if (ev.type === "alignment") {
        this.failover.aligned(ev.alignment);
        for (const timing of this.alignment.add(ev, this.audioStarted)) this.deps.port.event(timing);
        continue;
      }
      // Each candidate's first audio proves it serves (after a failover too): its health counts on it.
      if (this.served) {
        this.served();
        this.served = undefined;
      }
      // `audio_started` goes out with the first audio, in one write.
      const sending = this.audioStarted ? this.forward(ev.audio) : this.out.together(() => this.firstAudio(ev.audio));
      if (sending) await sending;
    }
    if (this.sending) await this.sent();
    if (this.closed) return false;
    // A provider may only end the stream once the client closed the session and every flush was answered.
    if (!this.commands.closeAccepted || this.text.flushesOpen) throw new ProviderError(`${this.binding!.provider.id} ended the stream before the session was over`, true);
    await this.out.send(this.failover.rest());
    return true;
  }

  /**
   * Audio the stream offers as it arrives, while the pump waits (`TtsStream.offerTo`): forwarded at
   * once, with no promise, once audio has begun on this candidate; anything else is left to the
   * pump. A send that has to wait is awaited by the pump before the next event.
   */
  private takeNow(ev: TtsEvent): boolean {
    if (ev.type !== "audio" || this.closed || !this.audioStarted || this.served || this.sending) return false;
    this.idle.touch();
    const sending = this.forward(ev.audio);
    if (sending) {
      this.sending = sending;
      sending.catch(() => {}); // awaited by the pump (sent), which throws it
    }
    return true;
  }

  private async sent(): Promise<void> {
    const sending = this.sending;
    this.sending = undefined;
    await sending;
  }

  /** Synchronous (no promise) while the audio needs no conversion and the client keeps up: the per-chunk path. */
  private forward(audio: Uint8Array): void | Promise<void> {
    const continued = this.failover.audio(audio);
    this.text.audioSent(this.stream!.given);
    this.noteDelivered();
    return continued instanceof Promise ? continued.then((a) => this.out.send(a)) : this.out.send(continued);
  }

  private firstAudio(audio: Uint8Array): void | Promise<void> {
    this.startAudio();
    return this.forward(audio);
  }

  private noteDelivered(): void {
    this.admission!.meter.delivered(this.binding!, this.text.delivered, this.cache.played());
  }

  private startAudio(): void {
    this.audioStarted = true;
    this.firstAudioAt = performance.now();
    this.failover.began(this.stream!.audioFormat, this.admission!.candidates.length > 1);
    const provider = this.binding!.provider.id;
    if (this.firstTextAt !== undefined) {
      this.deps.metrics.timeToFirstAudio.observe({ provider }, (this.firstAudioAt - this.firstTextAt) / 1000);
    }
    this.deps.port.event({ type: "audio_started", provider, model: this.binding!.canonical, format: this.stream!.audioFormat });
    for (const timing of this.alignment.release()) this.deps.port.event(timing);
  }

  private async complete(): Promise<void> {
    if (this.exhausted) return this.cutOff("the balance is used up; the text admitted before was spoken");
    await this.finish("completed", { code: CLOSE.normal, reason: "tts_complete" }, () => this.events.ended(this.binding, this.text.admitted, this.out.bytes));
  }

  protected sendError(error: ApiError): void {
    this.events.error(error);
  }

  protected stopWork(): void {
    this.stream?.cancel();
    this.failover.release();
  }

  protected ending(outcome: Outcome): SessionEnding {
    return {
      outcome,
      billed: this.text.billed(outcome, this.audioStarted, this.stream?.given),
      status: outcome === "completed" || this.interrupted || (outcome === "cut_off" && this.text.admitted > 0) ? "completed" : "failed",
      latencyMs: (this.firstAudioAt ?? performance.now()) - (this.firstTextAt ?? this.firstAudioAt ?? performance.now()),
      details: { characters: this.text.admitted, audioBytes: this.out.bytes },
      cached: this.cache.played(),
    };
  }
}
