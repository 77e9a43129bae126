import type { CharacterTimes } from "../types.ts";
import type { WireJson } from "../wire-json.ts";

// ElevenLabs' alignment objects as character times on a stream's timeline, an answer's or a
// frame's audio starting at `from` seconds. Undefined when there is none.

const numbers = (v: unknown): number[] | undefined => (Array.isArray(v) && v.every((n) => typeof n === "number") ? v : undefined);

function timed(chars: unknown, starts: number[] | undefined, ends: number[] | undefined): CharacterTimes | undefined {
  if (!Array.isArray(chars) || !chars.length || !starts || !ends) return undefined;
  return { chars: chars.map(String), starts, ends };
}

/**
 * An input-streaming socket frame's `alignment` or `normalizedAlignment`: `{chars,
 * charStartTimesMs, charDurationsMs}` in ms from the start of that frame's audio. Its docs'
 * examples spell the durations `charsDurationsMs`; both are read.
 */
export function frameTimes(wire: WireJson | null | undefined, from: number): CharacterTimes | undefined {
  const starts = numbers(wire?.charStartTimesMs);
  const durations = numbers(wire?.charDurationsMs ?? wire?.charsDurationsMs);
  return timed(
    wire?.chars,
    starts?.map((ms) => from + ms / 1000),
    starts?.map((ms, i) => from + (ms + (durations?.[i] ?? 0)) / 1000),
  );
}

/** A `…/with-timestamps` answer's `alignment` or `normalized_alignment`: `{characters, character_start_times_seconds, character_end_times_seconds}` from the start of that answer's audio. */
export function answerTimes(wire: WireJson | null | undefined, from: number): CharacterTimes | undefined {
  return timed(
    wire?.characters,
    numbers(wire?.character_start_times_seconds)?.map((t) => from + t),
    numbers(wire?.character_end_times_seconds)?.map((t) => from + t),
  );
}
