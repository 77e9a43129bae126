import { codePoints } from "../util/code-points.ts";
import { cutBefore, sentenceEndBetween } from "./sentences.ts";
import type { TtsEvent, TtsStream } from "./types.ts";

/**
 * Characters (UTF-16 code units) a WebSocket upstream is given beyond what the client has read
 * the audio of: about a minute of speech, 3 MB of 24 kHz PCM. A piece may run on to its sentence
 * end, up to twice this.
 */
export const TEXT_WINDOW = 1000;

type Command = { text: string } | { flush: true } | { end: true };

/**
 * Paces a WebSocket upstream by the text it is given. Such an upstream synthesizes all the text it
 * has and pushes the audio whether or not anyone reads it, and it cannot be asked to stop sending;
 * so it gets about `window` characters whose audio the client has not read to the end. Past that,
 * the piece sent goes on to its sentence end (at most `2 × window`), is flushed so that its end is
 * acknowledged, and further text waits here until the client has read the audio up to that
 * acknowledgement. A client that keeps up does not wait: the acknowledgement comes with the audio.
 * One that stops reading leaves the upstream idle, with at most two windows of text unread.
 * Our own flushes' acknowledgements are not passed on; the caller's flushes, its end and the order
 * of everything are kept. Only the text sent counts as `given`: a client that leaves while text
 * waits here does not pay for it.
 */
export function pacedText(inner: TtsStream, window = TEXT_WINDOW): TtsStream {
  const waiting: Command[] = [];
  /** Per flush sent and not yet read through: ours or the caller's, and the characters it closed. */
  const flushes: { ours: boolean; chars: number }[] = [];
  /** Characters sent since the last flush: the piece being sent. */
  let open = 0;
  /** Characters sent whose audio has not been read to the end (flushed or still open). */
  let unread = 0;
  /** Characters (code points) sent in all. */
  let sent = 0;

  const flush = (ours: boolean) => {
    flushes.push({ ours, chars: open });
    open = 0;
    inner.flush();
  };

  /** How much of `text` may go now: all of it within the window; past it, an open piece runs on to its sentence end. */
  function allowed(text: string): number {
    const soft = window - unread;
    const hard = 2 * window - unread;
    if (text.length <= soft) return text.length;
    if ((soft <= 0 && open === 0) || hard <= 0) return 0; // the piece is flushed: wait for the client
    const end = sentenceEndBetween(text, Math.max(soft, 0), hard);
    if (end !== undefined) return end;
    if (text.length <= hard) return text.length; // no sentence end yet: the piece goes on
    // A run-on text: cut at a sentence end or white space, or anywhere when nothing else is in flight.
    const cut = cutBefore(text, hard);
    return /\s/.test(text[cut - 1] + text[cut]) || unread === 0 ? cut : 0;
  }

  /** Sends what the window allows, in order. */
  function release(): void {
    while (waiting.length) {
      const next = waiting[0];
      if (!("text" in next)) {
        waiting.shift();
        if ("flush" in next) flush(false);
        else inner.end();
        continue;
      }
      const n = allowed(next.text);
      if (n > 0) {
        const piece = next.text.slice(0, n);
        inner.write(piece);
        sent += codePoints(piece);
        open += n;
        unread += n;
        next.text = next.text.slice(n);
        if (!next.text) waiting.shift();
        if (unread < window) continue;
      }
      if (!next.text) continue;
      // The window is full: mark the end of what went out, and wait for the client to read it.
      if (open > 0) flush(true);
      return;
    }
  }

  return {
    audioFormat: inner.audioFormat,
    /** What went to the upstream: the text sent, less any the inner stream holds back itself. */
    get given() {
      return inner.given ?? sent;
    },
    write(text) {
      if (!text) return;
      waiting.push({ text });
      release();
    },
    flush() {
      waiting.push({ flush: true });
      release();
    },
    end() {
      waiting.push({ end: true });
      release();
    },
    cancel() {
      waiting.length = 0;
      inner.cancel();
    },
    async *[Symbol.asyncIterator](): AsyncIterator<TtsEvent> {
      for await (const ev of inner) {
        if (ev.type !== "flushed") {
          yield ev;
          continue;
        }
        // Everything before this acknowledgement has been read: its text leaves the window.
        const done = flushes.shift();
        unread -= done?.chars ?? 0;
        release();
        if (!done?.ours) yield ev;
      }
    },
  };
}
