import type { CharacterTimes } from "../types.ts";

/** A position in a text (in code points) known to be spoken at `seconds`. */
export interface Anchor {
  at: number;
  seconds: number;
}

/**
 * Times every character of `text` from anchors, linearly between them: character k spans the
 * positions k to k + 1. Anchors that share a position make the time jump there (a pause that is no
 * character's): the character after it starts after the jump, the one before ends before it.
 * Positions before the first anchor or after the last take its time; times never go back.
 */
export function charTimes(text: string, anchors: Anchor[]): CharacterTimes {
  const chars = [...text];
  let latest = 0;
  const sorted = anchors.toSorted((a, b) => a.at - b.at).map((a) => ({ at: a.at, seconds: (latest = Math.max(a.seconds, latest)) }));
  const timeAt = (pos: number, afterJump: boolean): number => {
    const next = sorted.findIndex((a) => (afterJump ? a.at > pos : a.at >= pos));
    const hi = next < 0 ? undefined : sorted[next];
    const lo = next < 0 ? sorted.at(-1) : sorted[next - 1];
    if (!lo) return hi?.seconds ?? 0;
    if (!hi || lo.at === pos) return lo.seconds;
    if (hi.at === pos) return hi.seconds;
    return lo.seconds + ((pos - lo.at) * (hi.seconds - lo.seconds)) / (hi.at - lo.at);
  };
  return { chars, starts: chars.map((_, k) => timeAt(k, true)), ends: chars.map((_, k) => timeAt(k + 1, false)) };
}

/** The same times, `seconds` later. */
export function shifted(times: CharacterTimes, seconds: number): CharacterTimes {
  return { chars: times.chars, starts: times.starts.map((t) => t + seconds), ends: times.ends.map((t) => t + seconds) };
}
