import type { EnginePool, EngineSession } from "../pools/engine-pool.ts";
import type { EngineName } from "../../workers/engine-protocol.ts";
import type { AsyncQueue } from "../util/async-queue.ts";
import { ttsEventQueue } from "./audio-backlog.ts";
import { ProviderError } from "../errors.ts";
import type { AudioFormat, TtsEvent, TtsProvider, TtsStream, TtsStreamRequest, Voice } from "./types.ts";
import type { Utterance } from "./sentences.ts";
import { UtteranceStream } from "./utterance-stream.ts";

/** An embedded engine served by the engine worker pool, behind the common `TtsProvider`. */
export class LocalEngineProvider implements TtsProvider {
  readonly embedded = true;
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
    // A speed option left among the options is no number (the planner carries a number as `speed`).
    const { speed, options } = req;
    const refused = options.speed ?? (speed !== undefined && !(speed > 0) ? String(speed) : undefined);
    if (refused !== undefined) return Promise.reject(new ProviderError(`${this.id} option speed must be a positive number, not ${JSON.stringify(refused)}`, false));
    return new Promise((resolve, reject) => {
      let stream: LocalTtsStream | undefined;
      const queue = ttsEventQueue(this.id);
      const session = this.pool.open(
        this.engine,
        req.voice,
        format,
        (msg) => {
          switch (msg.ev) {
            case "opened":
              stream = new LocalTtsStream(
                session,
                queue,
                {
                  encoding: format === "mp3" ? "mp3" : "pcm_s16le",
                  sampleRate: msg.sampleRate,
                  channels: 1,
                },
                req.alignment === true,
              );
              return resolve(stream);
            case "audio":
              return queue.push({ type: "audio", audio: new Uint8Array(msg.buf) });
            case "alignment": {
              const { chars, starts, ends } = msg;
              return queue.push({ type: "alignment", alignment: { chars, starts, ends } });
            }
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
        },
        { speed, lane: req.interactive ? "interactive" : "bulk" },
      );
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
 * leaves at most one utterance of wasted work behind.
 */
class LocalTtsStream extends UtteranceStream {
  /** Resolves the utterance in the worker once the worker says it is done. */
  private spoken: (() => void) | undefined;

  constructor(
    private readonly session: EngineSession,
    queue: AsyncQueue<TtsEvent>,
    audioFormat: AudioFormat,
    /** Whether the engine is to time each utterance's characters. */
    private readonly timed: boolean,
  ) {
    super(audioFormat, queue);
  }

  /** The worker finished one utterance. */
  said(): void {
    this.spoken?.();
  }

  protected speak({ text, raw }: Utterance): Promise<void> {
    return new Promise((resolve) => {
      this.spoken = resolve;
      this.session.say(text, this.timed ? raw : undefined);
    });
  }

  /** The stream ends when the worker says it ended. */
  protected finish(): void {
    this.session.end();
  }

  protected stop(): void {
    this.session.drop();
    this.spoken?.();
  }
}
