import type { SpeechRun } from "../../audio/speech-runs.ts";

/**
 * The stretches of speech in what Flite prints with `-psdur`: each segment (phone) as
 * `name:end-time`, `pau` for its pauses (`pau:0.164 hh:0.255 … pau:1.911`). A run goes from the end
 * of one pause to the start of the next.
 */
export function segmentRuns(printed: string): SpeechRun[] {
  const runs: SpeechRun[] = [];
  let previousEnd = 0;
  let inRun = false;
  for (const segment of printed.trim().split(/\s+/)) {
    const [name, time] = segment.split(":");
    const end = Number(time);
    if (!name || !Number.isFinite(end)) continue;
    if (name !== "pau") {
      if (inRun) runs.at(-1)![1] = end;
      else runs.push([previousEnd, end]);
    }
    inRun = name !== "pau";
    previousEnd = end;
  }
  return runs;
}
