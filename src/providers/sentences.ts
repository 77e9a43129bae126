import { codePoints } from "../util/code-points.ts";

// Splits streamed text into utterances for engines that only synthesize whole utterances.

const BOUNDARY = /[.!?;:…。！？]+["')\]]*\s+|\n+/g;

/**
 * The longest utterance, in UTF-16 code units. An utterance is synthesized in one piece, so a run-on
 * text (no sentence end for pages) is cut at white space: one utterance's audio stays a few
 * hundred kilobytes, which is what a client that stops reading can leave the server holding
 * beyond the backlog bound (audio-backlog.ts).
 */
export const MAX_UTTERANCE = 500;

/** An utterance cut from a buffer, and where the text it stands for ends there (the white space after it included). */
export interface Cut {
  text: string;
  end: number;
}

/** Takes the complete sentences off the front of `buffer`; returns them and what is left. */
export function takeSentences(buffer: string): { sentences: Cut[]; rest: string } {
  const sentences: Cut[] = [];
  let start = 0;
  for (const m of buffer.matchAll(BOUNDARY)) {
    const end = m.index + m[0].length;
    pieces(buffer, start, end, sentences);
    start = end;
  }
  while (buffer.length - start > MAX_UTTERANCE) {
    const end = start + cutBefore(buffer.slice(start), MAX_UTTERANCE);
    pieces(buffer, start, end, sentences);
    start = end;
  }
  return { sentences, rest: buffer.slice(start) };
}

/** `buffer[start, end)` (one sentence) as utterances of at most MAX_UTTERANCE; none if it is all white space. */
function pieces(buffer: string, start: number, end: number, out: Cut[]): void {
  const stop = start + buffer.slice(start, end).trimEnd().length;
  const skipSpace = (at: number) => {
    while (at < stop && /\s/.test(buffer[at])) at++;
    return at;
  };
  let from = skipSpace(start);
  while (stop - from > MAX_UTTERANCE) {
    const cut = from + cutBefore(buffer.slice(from, stop), MAX_UTTERANCE);
    out.push({ text: buffer.slice(from, cut).trim(), end: cut });
    from = skipSpace(cut);
  }
  if (stop > from) out.push({ text: buffer.slice(from, stop), end });
}

/**
 * An utterance: the text to speak, the written text it stands for (`raw`: white space around it
 * included) and that text's characters (code points).
 */
export interface Utterance {
  text: string;
  raw: string;
  chars: number;
}

const utterance = (text: string, raw: string): Utterance => ({ text, raw, chars: codePoints(raw) });

/** Streamed text cut into utterances as it arrives, each knowing the part of the text it accounts for. */
export class UtteranceCutter {
  private buffer = "";
  /** Text taken in no utterance yet (white space only): it goes with the next one. */
  private carry = "";

  /** The complete utterances that `text` makes with what came before it. */
  take(text: string): Utterance[] {
    const buffer = this.buffer + text;
    const { sentences, rest } = takeSentences(buffer);
    this.buffer = rest;
    let at = 0;
    const out = sentences.map(({ text, end }) => {
      const raw = this.carry + buffer.slice(at, end);
      this.carry = "";
      at = end;
      return utterance(text, raw);
    });
    this.carry += buffer.slice(at, buffer.length - rest.length);
    return out;
  }

  /** White space after the last utterance, in none yet. */
  get carried(): string {
    return this.carry;
  }

  /** The text left over, as one last utterance (for a flush or the end); none if it is only white space. */
  rest(): Utterance | undefined {
    const text = this.buffer.trim();
    this.carry += this.buffer;
    this.buffer = "";
    if (!text) return undefined;
    const raw = this.carry;
    this.carry = "";
    return utterance(text, raw);
  }
}

/** The end of the first sentence in `text` that ends past `from` and at most at `max`, if any. */
export function sentenceEndBetween(text: string, from: number, max: number): number | undefined {
  for (const m of text.matchAll(BOUNDARY)) {
    const end = m.index + m[0].length;
    if (end > max) return undefined;
    if (end > from) return end;
  }
}

/**
 * Where to cut `text` so the first part is at most `max` long (and not empty): after its last
 * sentence end, else its last white space, else at `max` itself (never inside a surrogate pair).
 */
export function cutBefore(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const head = text.slice(0, max + 1);
  let sentenceEnd = 0;
  for (const m of head.matchAll(BOUNDARY)) if (m.index + m[0].length <= max) sentenceEnd = m.index + m[0].length;
  if (sentenceEnd > 0) return sentenceEnd;
  const space = head.search(/\s\S*$/);
  if (space > 0) return space;
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}

/** Where the sentence that `text[at]` is in starts: just past the last sentence end at or before `at` (0 when none). */
export function sentenceStart(text: string, at: number): number {
  let start = 0;
  for (const m of text.matchAll(BOUNDARY)) {
    const end = m.index + m[0].length;
    if (end > at) break;
    start = end;
  }
  return start;
}
