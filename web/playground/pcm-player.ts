// 16-bit little-endian mono PCM played through Web Audio as it arrives: each chunk becomes an
// AudioBuffer scheduled right after the one before, so playback starts with the first chunk. An
// analyser measures what reaches the speakers.

export class PcmPlayer {
  private readonly context = new AudioContext();
  private readonly analyser = this.context.createAnalyser();
  private readonly playing = new Set<AudioBufferSourceNode>();
  private nextAt = 0;
  /** A byte of a sample split between two chunks. */
  private odd: number | undefined;
  /** Samples handed to Web Audio so far. */
  samples = 0;
  /** The loudest sample heard by the analyser since the last `stop()` (0 to 1). */
  peak = 0;
  /** Until this context time the analyser may still hold audio that `stop()` dropped. */
  private quietFrom = 0;

  constructor() {
    this.analyser.fftSize = 2048;
    this.analyser.connect(this.context.destination);
    const frame = new Float32Array(this.analyser.fftSize);
    const measure = () => {
      if (this.context.currentTime < this.quietFrom) return;
      this.analyser.getFloatTimeDomainData(frame);
      for (const v of frame) this.peak = Math.max(this.peak, Math.abs(v));
    };
    setInterval(measure, 50);
  }

  /** Resumes the context (browsers start it suspended until a gesture). */
  resume(): Promise<void> {
    return this.context.resume();
  }

  play(chunk: ArrayBuffer, sampleRate: number): void {
    let bytes = new Uint8Array(chunk);
    if (this.odd !== undefined) {
      bytes = Uint8Array.of(this.odd, ...bytes);
      this.odd = undefined;
    }
    if (bytes.length % 2) {
      this.odd = bytes[bytes.length - 1];
      bytes = bytes.subarray(0, bytes.length - 1);
    }
    if (bytes.length === 0) return;
    const pcm = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const buffer = this.context.createBuffer(1, bytes.length / 2, sampleRate);
    const samples = buffer.getChannelData(0);
    for (let i = 0; i < samples.length; i++) samples[i] = pcm.getInt16(i * 2, true) / 32768;
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.analyser);
    this.nextAt = Math.max(this.nextAt, this.context.currentTime + 0.02);
    source.start(this.nextAt);
    this.nextAt += buffer.duration;
    this.samples += samples.length;
    this.playing.add(source);
    source.onended = () => this.playing.delete(source);
  }

  /** Whether everything scheduled has played out. */
  get idle(): boolean {
    return this.playing.size === 0;
  }

  /** Drops everything scheduled (barge-in, or a new run) and measures the level afresh. */
  stop(): void {
    for (const source of this.playing) source.stop();
    this.playing.clear();
    this.nextAt = 0;
    this.odd = undefined;
    this.peak = 0;
    // The analyser's window (plus a render quantum or two) of the dropped audio is not the next audio's level.
    this.quietFrom = this.context.currentTime + this.analyser.fftSize / this.context.sampleRate + 0.05;
  }
}
