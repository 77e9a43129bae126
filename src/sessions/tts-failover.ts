import { continuation, type Continuation, WholeMp3Frames } from "../audio/stream-continuation.ts";
import type { Binding } from "../catalogue/types.ts";
import { CannotContinue } from "../errors.ts";
import type { CachedUnits } from "../ledger/cost.ts";
import type { MeteredRequest } from "../ledger/metered-request.ts";
import { sentenceStart } from "../providers/sentences.ts";
import type { AudioFormat, CharacterTimes, TtsStream } from "../providers/types.ts";
import { codePoints } from "../util/code-points.ts";
import type { TtsCommand } from "./tts-events.ts";

// How a TTS session goes on with its next candidate when its provider fails (docs/routing.md,
// "Mid-session failover: TTS"). Before any audio went out the next one is given every command
// again; after, it is given the text from where the audio the client heard ended (the end of
// the last utterance the provider said it spoke, or of the last flush it answered: the start of
// the sentence whose audio had not ended), its audio goes on in the shape the client was given,
// and the text before that point is billed to the provider that spoke it.

type Entry = { cmd: TtsCommand; at: number; answered?: boolean };

export class TtsFailover {
  /** Commands given to providers, each with the characters written before it; none wholly before `heard`. */
  private log: Entry[] = [];
  private written = 0;
  /** Set from a failure after audio went out until the next candidate takes over: the part the failed one served. */
  private handing: { binding: Binding; upTo: number } | undefined;
  private continuation: Continuation | undefined;
  /** The audio's shape as the client was told it (`audio_started`). */
  private stream: AudioFormat | undefined;
  /** An MP3 stream that another candidate may continue goes out in whole frames, so that a provider cut off mid-frame leaves none broken. */
  private frames: WholeMp3Frames | undefined;
  /** A next candidate exists: the stream may have to be continued by another provider. */
  private switchable = false;
  /** The current provider: where its text starts, its audio's format and bytes, and when each character it timed ends (its own clock). */
  private source: { from: number; format?: AudioFormat; bytes: number; ends: number[] } = { from: 0, bytes: 0, ends: [] };

  /** A command given to the provider (text held back for a flush counts where it was given). */
  record(cmd: TtsCommand): void {
    this.log.push({ cmd, at: this.written });
    if (cmd.type === "text") this.written += codePoints(cmd.text);
  }

  /** The provider answered its oldest open flush: the client has its `flushed`, a successor must not answer it again. */
  flushAnswered(): void {
    const open = this.log.find((e) => e.cmd.type === "flush" && !e.answered);
    if (open) open.answered = true;
  }

  /** The audio of the first `chars` characters went out to its end: once audio began, what came before is never replayed. */
  heard(chars: number): void {
    if (!this.stream) return; // before any audio the next candidate is given every text again
    let drop = 0;
    while (drop < this.log.length && this.wholly(this.log[drop], chars)) drop++;
    if (drop) this.log = this.log.slice(drop);
  }

  /** The provider timed characters of its text (in order). */
  aligned(times: CharacterTimes): void {
    this.source.ends.push(...times.ends);
  }

  /**
   * The provider failed: where its successor starts (0 before any audio went out; after, `heard`,
   * or the start of the sentence the provider's timings say the audio had got to when further)
   * and the commands it is given from there; when audio went out, the part `binding` served.
   */
  replay(heard: number, binding: Binding | undefined, audioStarted: boolean): { from: number; commands: TtsCommand[] } {
    const from = audioStarted ? Math.max(heard, this.timedSentenceStart()) : 0;
    if (audioStarted && binding) this.handing = { binding, upTo: from };
    this.frames?.drop();
    this.source = { from, bytes: 0, ends: [] };
    return { from, commands: this.replayFrom(from) };
  }

  private replayFrom(from: number): TtsCommand[] {
    const replay: TtsCommand[] = [];
    for (const { cmd, at, answered } of this.log) {
      if (cmd.type === "flush" && answered) continue;
      if (cmd.type !== "text" || at >= from) replay.push(cmd);
      else if (at + codePoints(cmd.text) > from) replay.push({ type: "text", text: [...cmd.text].slice(from - at).join("") });
    }
    this.log = [];
    this.written = from;
    return replay;
  }

  /**
   * The next candidate opened `opened`: after audio went out its audio must continue the stream
   * in the shape it began in (else it is let go and fails like a provider that cannot serve, and
   * the next one is tried), and the part its predecessor served is closed on the meter, with the
   * characters the cache played so far (`cached`, the session's running total).
   */
  takeOver(opened: TtsStream, binding: Binding, meter: MeteredRequest, voice: string | undefined, cached: CachedUnits | undefined): void {
    const { stream } = this;
    if (!this.handing || !stream) return;
    const format = opened.audioFormat;
    const next = continuation(stream, format);
    if (!next) {
      opened.cancel();
      throw new CannotContinue(`${binding.provider.id} produces ${format.encoding} at ${format.sampleRate} Hz, which cannot continue this ${stream.encoding} stream at ${stream.sampleRate} Hz`);
    }
    this.continuation?.release();
    this.continuation = next;
    this.source.format = format;
    meter.partServed(this.handing.binding, this.handing.upTo, voice, cached);
    this.handing = undefined;
  }

  /** The first audio goes out in `format`: the stream's shape from then on; `switchable`: another candidate may take it over. */
  began(format: AudioFormat, switchable: boolean): void {
    this.stream = format;
    this.switchable = switchable;
    this.source.format = format;
  }

  /** Seconds of `bytes` of the stream, where its format tells (PCM). */
  seconds(bytes: number): number | undefined {
    return this.stream?.encoding === "pcm_s16le" ? bytes / 2 / this.stream.sampleRate : undefined;
  }

  /** The current provider's audio in the stream's shape. */
  audio(chunk: Uint8Array): Uint8Array | Promise<Uint8Array> {
    this.source.bytes += chunk.byteLength;
    // Only MP3 at the same rate continues MP3; with no candidate to continue it, the provider's MP3 passes as it comes.
    if (this.stream?.encoding === "mp3" && this.switchable) return (this.frames ??= new WholeMp3Frames()).take(chunk);
    return this.continuation ? this.continuation.process(chunk) : chunk;
  }

  /** What is held of the audio (an MP3 frame's start) at a flush or the end of the provider's stream. */
  rest(): Uint8Array {
    return this.frames?.rest() ?? new Uint8Array(0);
  }

  release(): void {
    this.continuation?.release();
  }

  /**
   * The start of the sentence in which the current provider's audio stopped, by its character
   * timings (PCM, whose length tells the time): 0 when it gave none.
   */
  private timedSentenceStart(): number {
    const { from, format, bytes, ends } = this.source;
    if (format?.encoding !== "pcm_s16le" || !ends.length) return 0;
    const seconds = bytes / 2 / format.sampleRate;
    let timed = 0;
    while (timed < ends.length && ends[timed] <= seconds) timed++;
    const texts = this.log.filter((e) => e.cmd.type === "text");
    if (!texts.length) return 0;
    const start = texts[0].at;
    const text = texts.map((e) => (e.cmd as { text: string }).text).join("");
    const chars = [...text];
    const target = chars.slice(0, Math.max(0, from + timed - start)).join("").length;
    return start + codePoints(text.slice(0, sentenceStart(text, target)));
  }

  /** Nothing of `e` remains to be said past `chars`: text that ends there, or an answered flush before it. */
  private wholly(e: Entry, chars: number): boolean {
    if (e.cmd.type === "text") return e.at + codePoints(e.cmd.text) <= chars;
    return e.cmd.type === "flush" && !!e.answered && e.at <= chars;
  }
}
