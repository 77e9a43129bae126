import { codePoints } from "../../util/code-points.ts";
import type { CharacterTimes } from "../types.ts";
import { charTimes } from "./char-times.ts";

/** A word's span, in seconds on the stream's timeline. */
export interface WordSpan {
  start: number;
  end: number;
}

/**
 * Word timings laid over the text they time, for providers that time words, not characters
 * (Cartesia): the n-th word timed is the n-th run of non-white-space in the text written, its
 * characters spread over the word's span, the white space before it over the gap since the word
 * before. Approximate where the provider's words are not the text's (a number it spelled out as
 * two words shifts the words after it).
 */
export class WordTimer {
  /** Text written and not timed yet. */
  private untimed = "";
  /** Characters (code points) timed so far. */
  private timed = 0;
  /** Where the last word timed ends: no character after it starts earlier. */
  until = 0;

  write(text: string): void {
    this.untimed += text;
  }

  /** Characters (code points) written so far. */
  get written(): number {
    return this.timed + codePoints(this.untimed);
  }

  /** The characters of the next words, up to the end of the last one. */
  words(spans: WordSpan[]): CharacterTimes {
    const anchors = [{ at: 0, seconds: this.until }];
    let taken = 0;
    for (const span of spans) {
      const word = /\S+/.exec(this.untimed.slice(taken));
      if (!word) break;
      const start = codePoints(this.untimed.slice(0, taken + word.index));
      const end = start + codePoints(word[0]);
      anchors.push({ at: start, seconds: span.start }, { at: end, seconds: span.end });
      taken += word.index + word[0].length;
      this.until = Math.max(this.until, span.end);
    }
    return this.take(taken, anchors);
  }

  /** The characters written up to `written` (a count of `written`) not timed yet, at the last word's end: the white space after it. */
  rest(written = this.written): CharacterTimes {
    const chars = [...this.untimed].slice(0, Math.max(0, written - this.timed)).join("");
    return this.take(chars.length, [{ at: 0, seconds: this.until }]);
  }

  private take(length: number, anchors: { at: number; seconds: number }[]): CharacterTimes {
    const text = this.untimed.slice(0, length);
    this.untimed = this.untimed.slice(length);
    this.timed += codePoints(text);
    return charTimes(text, anchors);
  }
}
