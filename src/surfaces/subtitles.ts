/** A transcript segment with its audio times in milliseconds. */
export interface TimedText {
  text: string;
  start_ms: number;
  end_ms: number;
}

function clock(ms: number, separator: "," | "."): string {
  const pad = (n: number, w = 2) => String(Math.floor(n)).padStart(w, "0");
  return `${pad(ms / 3_600_000)}:${pad((ms / 60_000) % 60)}:${pad((ms / 1000) % 60)}${separator}${pad(ms % 1000, 3)}`;
}

/** SubRip: numbered cues, `HH:MM:SS,mmm` times. */
export function toSrt(segments: TimedText[]): string {
  return segments.map((s, i) => `${i + 1}\n${clock(s.start_ms, ",")} --> ${clock(s.end_ms, ",")}\n${s.text.trim()}\n`).join("\n");
}

/** WebVTT: the header, then cues with `HH:MM:SS.mmm` times. */
export function toVtt(segments: TimedText[]): string {
  return `WEBVTT\n\n${segments.map((s) => `${clock(s.start_ms, ".")} --> ${clock(s.end_ms, ".")}\n${s.text.trim()}\n`).join("\n")}`;
}
