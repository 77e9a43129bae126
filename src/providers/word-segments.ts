import type { Transcription } from "./stt-types.ts";

export interface TimedWord {
  text: string;
  start_ms: number;
  end_ms: number;
}

/** For providers that give words, not segments: a segment per sentence, timed by its first and last word. */
export function sentenceSegments(words: TimedWord[]): Transcription["segments"] {
  const segments: Transcription["segments"] = [];
  let current: TimedWord[] = [];
  const close = () => {
    if (!current.length) return;
    segments.push({ text: current.map((w) => w.text).join(" "), start_ms: current[0]!.start_ms, end_ms: current.at(-1)!.end_ms });
    current = [];
  };
  for (const w of words) {
    current.push(w);
    if (/[.?!]$/.test(w.text)) close();
  }
  close();
  return segments;
}
