import { ProviderError } from "../../src/errors.ts";
import type { AudioFormat, TtsEvent, TtsProvider, TtsStream, TtsStreamRequest } from "../../src/providers/types.ts";
import { AsyncQueue } from "../../src/util/async-queue.ts";
import { FIXED_CHUNK, FIXED_RATE } from "./fixed-pcm-provider.ts";
import { mp3, speech } from "./http-fake.ts";

// An in-process TTS provider whose every session follows a script, to forge the moment it fails
// at: refused; one chunk of audio then a 500 (mid-utterance); its utterance spoken to its end then
// a 500 (a sentence boundary, no flush answer); a flush answered then a 500. It speaks whole
// utterances (`spoken` after each), `chunks` pieces of 20 ms each (asked for MP3, pieces of its
// own MP3 at `mp3Rate`), and keeps the text each session was given, to see what a failover replayed.

export type TtsScript = "serve" | "refuse" | "die-mid-audio" | "die-after-spoken" | "die-after-flushed";

export class ScriptedTts implements TtsProvider {
  /** Scripts for the next sessions, in order; a session past them serves. */
  readonly plan: TtsScript[] = [];
  /** The text each session was given, in the order they were opened. */
  readonly given: string[] = [];
  /** Whether each session was opened for a live conversation's answer (`interactive`), in the same order. */
  readonly interactive: boolean[] = [];
  /** While set, a session's opening waits for it (a replay caught before its provider answers). */
  gate: Promise<void> | undefined;
  /** Resolves when the next opening begins. */
  private opening: (() => void) | undefined;

  private readonly mp3Chunk: Uint8Array;

  constructor(
    readonly id: string,
    private readonly chunks = 5,
    private readonly mp3Rate = 24000,
  ) {
    this.mp3Chunk = mp3(speech("Hi.", mp3Rate), mp3Rate);
  }

  /** Resolves when the next session is opened. */
  nextOpen(): Promise<void> {
    return new Promise((resolve) => (this.opening = resolve));
  }

  async open(req: TtsStreamRequest): Promise<TtsStream> {
    const script = this.plan.shift() ?? "serve";
    const at = this.given.push("") - 1;
    this.interactive.push(req.interactive === true);
    this.opening?.();
    this.opening = undefined;
    if (this.gate) await this.gate;
    if (script === "refuse") throw new ProviderError("connection refused", true);
    const queue = new AsyncQueue<TtsEvent>();
    const asMp3 = req.format === "mp3";
    const chunk = asMp3 ? this.mp3Chunk : FIXED_CHUNK;
    const audioFormat: AudioFormat = asMp3 ? { encoding: "mp3", sampleRate: this.mp3Rate, channels: 1 } : { encoding: "pcm_s16le", sampleRate: FIXED_RATE, channels: 1 };
    const die = () => queue.fail(new ProviderError("upstream returned 500", true));
    let text = "";
    let spoken = 0;
    const speak = () => {
      if (!text) return;
      if (script === "die-mid-audio") {
        queue.push({ type: "audio", audio: chunk });
        return die();
      }
      for (let i = 0; i < this.chunks; i++) queue.push({ type: "audio", audio: chunk });
      spoken += [...text].length;
      queue.push({ type: "spoken", chars: spoken });
      text = "";
      if (script === "die-after-spoken") die();
    };
    return {
      audioFormat,
      write: (t) => {
        text += t;
        this.given[at] += t;
      },
      flush: () => {
        speak();
        queue.push({ type: "flushed" });
        if (script === "die-after-flushed") die();
      },
      end: () => {
        speak();
        queue.end();
      },
      cancel: () => queue.end(),
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  async voices() {
    return [];
  }
}
