import type { AudioLane, AudioPool } from "../../pools/audio-pool.ts";
import type { FromAudio } from "../../../workers/audio-protocol.ts";
import type { FilePool } from "../../pools/file-pool.ts";
import { NoSeat } from "../../pools/worker-pool.ts";
import { DEFAULT_VAD } from "../../audio/vad.ts";
import { AsyncQueue } from "../../util/async-queue.ts";
import { ProviderError, ProviderOverloaded } from "../../errors.ts";
import { feedPaced } from "../paced-audio.ts";
import { SAMPLE_RATE } from "./decoder.ts";
import type { SttEvent, SttFamily, SttProvider, SttStream, SttStreamRequest, Transcription, TranscriptionRequest } from "../stt-types.ts";

/** File audio goes to the worker in chunks of this many samples (1 s). */
const FILE_CHUNK = SAMPLE_RATE;

/** PocketSphinx has no turn detector of its own: the router VAD decides its turns, in the worker that decodes. */
export const POCKETSPHINX_FAMILY: SttFamily = {
  name: "pocketsphinx",
  portableOptions: ["language", "interim_results", "silence_duration_ms", "min_speech_duration_ms", "min_silence_duration_ms", "speech_threshold"],
  turnDetector: "none",
  routerVadInside: true,
  turnStyles: ["acoustic"],
  commitFrame: true,
  interimDefault: true,
  inputFormats: ["pcm_16000"],
  audioOptions: { sampleRate: "samprate" },
  passthrough: false,
};

/** The embedded recognizer (US English), decoding in the audio workers with their bounded decoders. */
export class LocalSphinxProvider implements SttProvider {
  readonly id = "pocketsphinx";
  /** Its opening waits for a decoder only as long as `LOCAL_STT_QUEUE_WAIT_MS`, then is refused `provider_overloaded`. */
  readonly embedded = true;

  constructor(
    private readonly pool: AudioPool,
    private readonly files: FilePool,
  ) {}

  overloaded(): ProviderOverloaded | undefined {
    return this.pool.recognizersFull ? this.refusal("every local recognizer is busy and the queue for one is full") : undefined;
  }

  private refusal(why: string): ProviderOverloaded {
    // A refused client is told to come back after about as long as a session may wait for a decoder.
    return new ProviderOverloaded(`pocketsphinx: ${why}`, Math.max(1, Math.ceil(this.pool.decoders.waitMs / 1000)));
  }

  family(): SttFamily {
    return POCKETSPHINX_FAMILY;
  }

  /**
   * A file: decoded to 16 kHz PCM in a file worker as the recognizer hears it (at most `AHEAD_MS`
   * ahead, and no more than the seconds held for it), cut into utterances by the router VAD, each
   * one a segment.
   */
  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    if (req.language && !/^en(-|$)/i.test(req.language)) throw new ProviderError(`pocketsphinx recognizes English only, not ${req.language}`, false);
    req.given?.(0); // nothing yet, while the file is decoded and a decoder awaited
    const audio = await this.files.decode(req.bytes, req.container, SAMPLE_RATE, { maxSamples: req.seconds * SAMPLE_RATE, chunkSamples: FILE_CHUNK });
    let stream: SttStream;
    try {
      req.signal?.throwIfAborted();
      // The router VAD's scores tell how far the recognizer has heard.
      stream = await this.openStream({
        model: req.model,
        audioFormat: "pcm_16000",
        channels: 1,
        interim: false,
        commitStrategy: "auto",
        routerVad: DEFAULT_VAD,
        vadScores: true,
        options: {},
        signal: req.signal,
      });
    } catch (err) {
      audio.close();
      throw err;
    }
    let failure: unknown;
    let given = 0;
    const feed = feedPaced(audio, SAMPLE_RATE * 2, "heard", {
      send: (piece) => {
        given += piece.byteLength;
        stream.send(piece); // transferred on to the audio worker
        req.given?.(given / (SAMPLE_RATE * 2));
      },
      end: () => stream.end(),
      failed: (err) => {
        failure = err;
        stream.cancel();
      },
    });
    const release = () => {
      feed.stop();
      stream.cancel();
    };
    req.signal?.addEventListener("abort", release, { once: true });
    try {
      if (req.signal?.aborted) release();
      const segments: Transcription["segments"] = [];
      for await (const ev of stream) {
        if (ev.type === "vad") feed.heard(ev.atMs);
        else if (ev.type === "transcript" && ev.final) segments.push({ text: ev.text, start_ms: ev.startMs, end_ms: ev.endMs });
      }
      if (failure) throw failure;
      req.signal?.throwIfAborted();
      return { text: segments.map((s) => s.text).join(" "), segments };
    } finally {
      feed.stop();
      req.signal?.removeEventListener("abort", release);
    }
  }

  open(req: SttStreamRequest): Promise<SttStream> {
    return this.openStream(req);
  }

  /**
   * Accepted as soon as one of the workers' decoders is reserved for the session (or refused when
   * none comes free in time): the worker makes it ready (built on first use, reset), and audio
   * sent meanwhile waits there in order.
   */
  private async openStream(req: SttStreamRequest): Promise<SttStream> {
    if (req.audioFormat !== "pcm_16000" || req.channels !== 1) throw new ProviderError("pocketsphinx takes 16 kHz mono PCM only", false);
    if (req.language && !/^en(-|$)/i.test(req.language)) throw new ProviderError(`pocketsphinx recognizes English only, not ${req.language}`, false);
    const queue = new AsyncQueue<SttEvent>();
    let lane!: AudioLane; // assigned before the worker's first answer can arrive
    const listener = (msg: FromAudio) => {
      switch (msg.ev) {
        case "opened":
          return;
        case "speech_started":
          return queue.push({ type: "signal", origin: "router", signal: "started", atMs: msg.atMs });
        case "speech_ended":
          queue.push({ type: "signal", origin: "router", signal: "end", atMs: msg.atMs });
          if (msg.committed) queue.push({ type: "committed", origin: "router", atMs: msg.atMs });
          return;
        case "vad_score":
          return queue.push({ type: "vad", score: msg.score, atMs: msg.atMs });
        case "interim":
        case "final":
          return queue.push({ type: "transcript", final: msg.ev === "final", text: msg.text, startMs: msg.startMs, endMs: msg.endMs });
        case "committed":
          return queue.push({ type: "committed", origin: "client", atMs: msg.atMs });
        case "cleared":
          return queue.push({ type: "cleared", atMs: msg.atMs });
        case "ended":
          lane.drop();
          return queue.end();
        case "error":
          lane.drop();
          return queue.fail(new ProviderError(msg.message, true));
      }
    };
    const options = { rate: 16000, vad: req.routerVad, scores: req.vadScores, autoCommit: req.commitStrategy === "auto" && !!req.routerVad, interim: req.interim };
    lane = await this.pool.openRecognizer(options, listener, req.signal).catch((err) => {
      throw err instanceof NoSeat ? this.refusal(err.message) : err;
    });
    return {
      send: (audio) => lane.audio(audio),
      commit: () => lane.commit(),
      clear: () => lane.clear(),
      end: () => lane.end(),
      cancel: () => {
        lane.drop();
        queue.end();
      },
      // Audio is transferred to the worker as it comes; how far it runs ahead is what the router VAD has heard (paced-audio.ts).
      bufferedAmount: 0,
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }
}
