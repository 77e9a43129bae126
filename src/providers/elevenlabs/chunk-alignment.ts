import type { CharacterTimes } from "../types.ts";
import type { WireJson } from "../wire-json.ts";

const numbers = (v: unknown): number[] | undefined => (Array.isArray(v) && v.every((n) => typeof n === "number") ? v : undefined);

/**
 * An audio frame's `alignment` or `normalizedAlignment` from ElevenLabs' input-streaming socket
 * (`{chars, charStartTimesMs, charDurationsMs}`, in ms from the start of that frame's audio) on
 * the stream's timeline, the frame's audio starting at `from` seconds. Its docs' examples spell
 * the durations `charsDurationsMs`; both are read. Undefined when the frame has none.
 */
export function chunkTimes(wire: WireJson | null | undefined, from: number): CharacterTimes | undefined {
  const chars = wire?.chars;
  const starts = numbers(wire?.charStartTimesMs);
  const durations = numbers(wire?.charDurationsMs ?? wire?.charsDurationsMs);
  if (!Array.isArray(chars) || !chars.length || !starts || !durations) return undefined;
  return {
    chars: chars.map(String),
    starts: starts.map((ms) => from + ms / 1000),
    ends: starts.map((ms, i) => from + (ms + (durations[i] ?? 0)) / 1000),
  };
}
