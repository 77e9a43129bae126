import type { SttAudioFormat } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { PortableSttOption, PortableValues, SttFamily } from "../providers/stt-types.ts";
import { refusal } from "./members.ts";

/** A request as a family is asked to serve it. */
export interface Asked {
  explicit: Set<PortableSttOption>;
  portable: PortableValues;
  commitStrategy: "auto" | "manual";
  turnDetection: "auto" | "acoustic" | "semantic";
  eventFormat: "normalized" | "provider";
  audioFormat: SttAudioFormat;
  sampleRate: number;
  channels: number;
  options: Record<string, string>;
}

/** Why this family cannot serve the request as asked (a refusal naming the request's member), or undefined when it can. */
export function unsupported(family: SttFamily, asked: Asked): ApiError | undefined {
  const refuse = (member: string, why: string) => refusal("unsupported_stt_option", member, `: ${why} (${family.name})`);
  if (!family.inputFormats.includes(asked.audioFormat)) return new ApiError("invalid_request", `${family.name} does not take ${asked.audioFormat} audio`, { param: "audioFormat" });
  for (const option of asked.explicit) if (!family.portableOptions.includes(option)) return refuse(`portable.${option}`, "this model family cannot honour it");
  for (const [option, [min, max]] of Object.entries(family.optionRanges ?? {}) as [PortableSttOption, [number, number]][]) {
    const value = asked.portable[option as keyof PortableValues];
    if (typeof value === "number" && (value < min || value > max)) return refuse(`portable.${option}`, `must be from ${min} to ${max} for this family`);
  }
  if (asked.turnDetection !== "auto" && !family.turnStyles.includes(asked.turnDetection)) {
    return refuse("turnDetection", `${asked.turnDetection} turns are not available; this family offers ${family.turnStyles.join(", ")}`);
  }
  if (asked.commitStrategy === "manual" && !family.commitFrame) return refuse("commitStrategy", "this family has no commit frame");
  if (asked.eventFormat === "provider" && !family.passthrough) return refuse("eventFormat", "provider passthrough needs an upstream realtime WebSocket, which this family does not have");
  const { encoding, sampleRate, channels, encodingValues = { pcm: "linear16", ulaw: "mulaw" } } = family.audioOptions;
  const conflict = (name: string | undefined, expected: string) => name !== undefined && asked.options[name] !== undefined && asked.options[name].toLowerCase() !== expected.toLowerCase();
  if (
    conflict(sampleRate, String(asked.sampleRate)) ||
    conflict(channels, String(asked.channels)) ||
    conflict(encoding, asked.audioFormat.startsWith("ulaw") ? encodingValues.ulaw : encodingValues.pcm)
  ) {
    return refusal("conflicting_audio_format", "options", ` declare audio that differs from the audio format ${asked.audioFormat}`);
  }
  return undefined;
}
