import type { EnginePool, EngineSession } from "../../workers/engine-pool.ts";
import type { EngineName } from "../../workers/engine-protocol.ts";
import type { AsyncQueue } from "../util/async-queue.ts";
import { AUDIO_BACKLOG_BYTES, ttsEventQueue } from "./audio-backlog.ts";
import { UtteranceCutter, type Utterance } from "./sentences.ts";
import { ProviderError, type AudioFormat, type TtsEvent, type TtsProvider, type TtsStream, type TtsStreamRequest, type Voice } from "./types.ts";

/** An embedded engine served by the engine worker pool, behind the common `TtsProvider`. */
export class LocalEngineProvider implements TtsProvider {
  private listing: Promise<{ voices: Voice[]; names: ReadonlySet<string> }> | undefined;

  constructor(
    readonly id: string,
    private readonly engine: EngineName,
    private readonly pool: EnginePool,
  ) {}

  open(req: TtsStreamRequest): Promise<TtsStream> {
    if (req.format !== "pcm" && req.format !== "mp3") {
      return Promise.reject(new ProviderError(`${this.id} cannot produce ${req.format}`, false));
    }
    const format = req.format;
    return new Promise((resolve, reject) => {
      let stream: LocalTtsStream | undefined;
      const queue = ttsEventQueue(this.id);
      const session = this.pool.open(this.engine, req.voice, format, (msg) => {
        switch (msg.ev) {
          case "opened":
            stream = new LocalTtsStream(session, queue, {
              encoding: format === "mp3" ? "mp3" : "pcm_s16le",
              sampleRate: msg.sampleRate,
              channels: 1,
            });
            return resolve(stream);
          case "audio":
            return queue.push({ type: "audio", audio: new Uint8Array(msg.buf) });
          case "said":
            return stream?.said();
          case "ended":
            session.drop();
            return queue.end();
          case "error": {
            session.drop();
            // An unknown voice is the caller's mistake; any other engine failure may be retried elsewhere.
            const err = msg.unknownVoice ? new ProviderError(msg.message, false, "voice") : new ProviderError(msg.message, true);
            return stream ? queue.fail(err) : reject(err);
          }
        }
      });
    });
  }

  async voices(): Promise<Voice[]> {
    return (await this.list()).voices;
  }

  async voiceNames(): Promise<ReadonlySet<string>> {
    return (await this.list()).names;
  }

  /** The engine's voice list, asked of a worker once (again after a failure). */
  private list(): Promise<{ voices: Voice[]; names: ReadonlySet<string> }> {
    if (!this.listing) {
      this.listing = this.pool.voices(this.engine).then(({ voices, names }) => ({ voices: voices as Voice[], names: new Set(names) }));
      this.listing.catch(() => (this.listing = undefined));
    }
    return this.listing;
  }
}

/**
 * Text → utterances → engine. One utterance is in the worker at a time, so a cancelled session
 * leaves at most one utterance of wasted work behind, and the next one goes only while the client
 * has less than AUDIO_BACKLOG_BYTES of audio left to read: a client that stops reading holds at
 * most that plus one utterance's audio.
 */
class LocalTtsStream implements TtsStream {
  private readonly cutter = new UtteranceCutter();
  private readonly utterances: Utterance[] = [];
  /** Characters of the utterances sent to the worker. */
  given = 0;
  private inFlight = false;
  /** Waiting for the client to read the backlog down. */
  private waiting = false;
  private cancelled = false;
  private sent = 0;
  private done = 0;
  private readonly flushMarks: number[] = [];
  private ending = false;

  constructor(
    private readonly session: EngineSession,
    private readonly queue: AsyncQueue<TtsEvent>,
    readonly audioFormat: AudioFormat,
  ) {}

  [Symbol.asyncIterator]() {
    return this.queue[Symbol.asyncIterator]();
  }

  write(text: string): void {
    for (const utterance of this.cutter.take(text)) this.enqueue(utterance);
  }

  flush(): void {
    this.enqueueRest();
    this.flushMarks.push(this.sent + this.utterances.length);
    this.settleFlushes();
  }

  end(): void {
    this.enqueueRest();
    this.ending = true;
    this.pump();
  }

  cancel(): void {
    this.cancelled = true;
    this.utterances.length = 0;
    this.session.drop();
    this.queue.end();
  }

  /** The worker finished one utterance. */
  said(): void {
    this.inFlight = false;
    this.done++;
    this.settleFlushes();
    this.pump();
  }

  private enqueueRest(): void {
    const rest = this.cutter.rest();
    if (rest) this.enqueue(rest);
  }

  private enqueue(utterance: Utterance): void {
    this.utterances.push(utterance);
    this.pump();
  }

  private pump(): void {
    if (this.inFlight || this.waiting || this.cancelled) return;
    if (this.queue.unread >= AUDIO_BACKLOG_BYTES) {
      this.waiting = true;
      void this.queue.roomFor(AUDIO_BACKLOG_BYTES).then(() => {
        this.waiting = false;
        this.pump();
      });
      return;
    }
    const next = this.utterances.shift();
    if (next !== undefined) {
      this.inFlight = true;
      this.sent++;
      this.given += next.chars;
      this.session.say(next.text);
    } else if (this.ending) {
      this.ending = false;
      this.session.end();
    }
  }

  private settleFlushes(): void {
    while (this.flushMarks.length && this.flushMarks[0] <= this.done) {
      this.flushMarks.shift();
      this.queue.push({ type: "flushed" });
    }
  }
}
