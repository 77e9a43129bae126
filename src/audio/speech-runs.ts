import { samplesOf } from "./bytes.ts";

/** A stretch of speech in an utterance's audio, in seconds from its first sample. */
export type SpeechRun = [start: number, end: number];

/** A 10 ms window is silent when no sample in it reaches this (about -40 dBFS). */
const SILENCE_PEAK = 330;
const WINDOW_SECONDS = 0.01;
/** A silence at least this long between two stretches of speech is a pause. */
const MIN_PAUSE_SECONDS = 0.15;

/**
 * Where 16-bit PCM holds speech: the stretches of non-silent 10 ms windows, split where a pause
 * (silence of at least 150 ms) lies between them. What an engine that tells nothing of its timing
 * (SVOX Pico) is timed by.
 */
export function speechRuns(pcm: Uint8Array, rate: number): SpeechRun[] {
  const samples = samplesOf(pcm);
  const window = Math.max(1, Math.round(rate * WINDOW_SECONDS));
  const runs: SpeechRun[] = [];
  for (let at = 0; at < samples.length; at += window) {
    let peak = 0;
    for (let i = at; i < Math.min(at + window, samples.length); i++) peak = Math.max(peak, Math.abs(samples[i]));
    if (peak < SILENCE_PEAK) continue;
    const [start, end] = [at / rate, Math.min(at + window, samples.length) / rate];
    const last = runs.at(-1);
    if (last && start - last[1] < MIN_PAUSE_SECONDS) last[1] = end;
    else runs.push([start, end]);
  }
  return runs;
}
