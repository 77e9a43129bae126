import type { CharacterTimes, TtsEvent, TtsStream } from "../providers/types.ts";
import { UtteranceCutter } from "../providers/sentences.ts";
import { codePoints } from "../util/code-points.ts";
import type { Lexicon, Piece, PhonemeSupport } from "./lexicon.ts";

// A provider's stream with the dictionaries applied (docs/pronunciation.md#streaming): text is
// cut into utterances as the session's providers cut it (a sentence, or what a flush or the end
// leaves), so a word split across frames is whole when the rules see it. What the stream says
// back is in the caller's characters: `given` and `spoken` count the text the caller wrote, and
// `alignment` times the caller's text, a replaced string spread over its replacement's span.

/**
 * How a session opens a provider with the request's dictionaries: refused (400) when the provider
 * cannot say a phoneme rule; told that the text carries SSML where phoneme tags go to it; its
 * stream wrapped. Nothing changes when no dictionary is named.
 */
export function pronunciationFor(lexicon: Lexicon | undefined, provider: string, phonemes: PhonemeSupport): { request: { ssml?: true }; wrap: (stream: TtsStream) => TtsStream } {
  if (!lexicon || lexicon.empty) return { request: {}, wrap: (stream) => stream };
  lexicon.check(provider, phonemes);
  return { request: lexicon.hasPhonemes && phonemes ? { ssml: true } : {}, wrap: (stream) => new PronouncedStream(stream, lexicon, phonemes) };
}

export class PronouncedStream implements TtsStream {
  private readonly cutter = new UtteranceCutter();
  /** Utterances handed on: characters said (the provider's count) and written (the caller's), running totals. */
  private readonly marks: { said: number; written: number }[] = [];
  private said = 0;
  private written = 0;
  /** Pieces handed on whose timings are still to come. */
  private readonly timed: Piece[] = [];
  private partial: { said: number; start: number; end: number } | undefined;

  constructor(
    private readonly inner: TtsStream,
    private readonly lexicon: Lexicon,
    private readonly phonemes: PhonemeSupport,
  ) {}

  get audioFormat() {
    return this.inner.audioFormat;
  }

  /** Characters the caller wrote that the provider was handed (what a client that leaves pays for). */
  get given(): number {
    return this.writtenAt(this.inner.given ?? this.said);
  }

  write(text: string): void {
    for (const u of this.cutter.take(text)) this.hand(u.raw);
  }

  flush(): void {
    this.handRest();
    this.inner.flush();
  }

  end(): void {
    this.handRest();
    this.inner.end();
  }

  cancel(): void {
    this.inner.cancel();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<TtsEvent> {
    for await (const ev of this.inner) {
      if (ev.type === "spoken") yield { type: "spoken", chars: this.writtenAt(ev.chars) };
      else if (ev.type === "alignment") yield { ...ev, alignment: this.timesWritten(ev.alignment), normalized: ev.normalized ?? ev.alignment };
      else yield ev;
    }
  }

  private handRest(): void {
    const rest = this.cutter.rest();
    if (rest) this.hand(rest.raw);
  }

  private hand(raw: string): void {
    const pieces = this.lexicon.pieces(raw, this.phonemes);
    const said = pieces.map((p) => p.said).join("");
    this.said += codePoints(said);
    this.written += codePoints(raw);
    this.marks.push({ said: this.said, written: this.written });
    this.timed.push(...pieces);
    this.inner.write(said);
  }

  /** The caller's characters behind the first `said` characters handed on: whole utterances, then the next one's share. */
  writtenAt(said: number): number {
    let before = { said: 0, written: 0 };
    for (const mark of this.marks) {
      if (mark.said > said) {
        const share = (said - before.said) / (mark.said - before.said);
        return before.written + Math.floor(share * (mark.written - before.written));
      }
      before = mark;
    }
    return before.written;
  }

  /** Timings of said characters, in order, as timings of the written ones. */
  private timesWritten(times: CharacterTimes): CharacterTimes {
    const out: CharacterTimes = { chars: [], starts: [], ends: [] };
    for (let i = 0; i < times.chars.length; i++) {
      const piece = this.timed[0];
      if (!piece) break;
      const start = times.starts[i]!;
      const end = times.ends[i]!;
      if (piece.said === piece.written) {
        out.chars.push(times.chars[i]!);
        out.starts.push(start);
        out.ends.push(end);
        this.consume(piece, 1);
        continue;
      }
      this.partial = this.partial ? { said: this.partial.said + 1, start: this.partial.start, end } : { said: 1, start, end };
      if (this.partial.said >= [...piece.said].length) {
        const chars = [...piece.written];
        const step = (this.partial.end - this.partial.start) / chars.length;
        chars.forEach((c, k) => {
          out.chars.push(c);
          out.starts.push(this.partial!.start + k * step);
          out.ends.push(this.partial!.start + (k + 1) * step);
        });
        this.partial = undefined;
        this.timed.shift();
      }
    }
    return out;
  }

  /** `n` characters of a piece said as written are timed. */
  private consume(piece: Piece, n: number): void {
    const rest = [...piece.written].slice(n).join("");
    if (rest) this.timed[0] = { written: rest, said: rest };
    else this.timed.shift();
  }
}
