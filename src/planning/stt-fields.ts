import type { SttAudioFormat } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import { NUMERIC_OPTIONS } from "./plan-stt.ts";
import { AUDIO_FORMATS, type SttRequest } from "./stt-request.ts";
import type { PortableValues } from "../providers/stt-types.ts";
import { preferencesFromQuery } from "../routing/preferences.ts";
import { fallbacksOfText } from "./fallbacks.ts";

// The STT settings as named fields: /v1/stt's query, and a realtime profile's `pipeline.stt.input`,
// which speaks the same vocabulary. Every rule is checked before any work (HTTP 400 before the upgrade).

const BOOLEANS = ["interim_results", "include_timestamps", "include_language_detection", "diarization", "formatting", "include_filler_words"] as const;
const STRINGS = ["language", "context"] as const;
const ROUTING = ["model", "audio_format", "provider", "provider_order", "provider_only", "provider_ignore", "allow_fallbacks", "fallbacks"];
const KNOWN = new Set<string>([...ROUTING, "channels", "commit_strategy", "turn_detection", "keyterms", "event_format", ...NUMERIC_OPTIONS, ...BOOLEANS, ...STRINGS]);

/** The query's fields, read as a query is: a realtime profile's `pipeline.stt.input` speaks the same vocabulary. */
export interface SttFields {
  get(name: string): string | null;
  getAll(name: string): string[];
  keys(): Iterable<string>;
}

/** The typed request's members by this query's names. */
const PARAMS: Record<string, string> = { audioFormat: "audio_format", commitStrategy: "commit_strategy", turnDetection: "turn_detection", eventFormat: "event_format", options: "provider_options" };

/** A planner's member (`audioFormat`, `portable.speech_threshold`) as this query names it. */
export const nativeSttParam = (member: string | undefined) => (member === undefined ? undefined : (PARAMS[member] ?? member.replace(/^portable\./, "")));

const bad = (param: string, why: string) => new ApiError("invalid_request", `${param} ${why}`, { param });

function oneOf<T extends string>(fields: SttFields, name: string, values: readonly T[]): T | undefined {
  const v = fields.get(name);
  if (v === null) return undefined;
  if (!values.includes(v as T)) throw bad(name, `must be one of ${values.join(", ")}`);
  return v as T;
}

/** A number as written; text that is none is NaN, which the planner refuses with the range. */
function number(fields: SttFields, name: string): number | undefined {
  const v = fields.get(name);
  if (v === null) return undefined;
  return v.trim() === "" ? Number.NaN : Number(v);
}

function bool(fields: SttFields, name: string): boolean | undefined {
  const v = fields.get(name);
  if (v === null) return undefined;
  if (v !== "true" && v !== "false") throw bad(name, "must be true or false");
  return v === "true";
}

/** The query as a typed request. Throws `ApiError` for what is wrong as written (unknown keys, values outside an enumeration). */
export function readSttQuery(fields: SttFields): SttRequest {
  const options: Record<string, string> = {};
  for (const key of fields.keys()) {
    const native = /^provider_options\[([^\]]+)\]$/.exec(key);
    if (native) options[native[1]] = fields.get(key)!;
    else if (!KNOWN.has(key)) throw bad(key, "is not a known parameter (provider-native settings go in provider_options[<name>])");
  }
  const audioFormat = oneOf<SttAudioFormat>(fields, "audio_format", AUDIO_FORMATS);
  const channels = number(fields, "channels");
  const portable: PortableValues = {};
  for (const n of NUMERIC_OPTIONS) {
    const v = number(fields, n);
    if (v !== undefined) portable[n] = v;
  }
  for (const b of BOOLEANS) {
    const v = bool(fields, b);
    if (v !== undefined) portable[b] = v;
  }
  for (const s of STRINGS) if (fields.get(s) !== null) portable[s] = fields.get(s)!;
  if (fields.getAll("keyterms").length) portable.keyterms = fields.getAll("keyterms");
  return {
    model: fields.get("model") ?? undefined,
    provider: fields.get("provider") || undefined,
    audioFormat,
    channels,
    commitStrategy: oneOf(fields, "commit_strategy", ["auto", "manual"] as const),
    turnDetection: oneOf(fields, "turn_detection", ["auto", "acoustic", "semantic"] as const),
    eventFormat: oneOf(fields, "event_format", ["normalized", "provider"] as const),
    portable,
    options,
    preferences: preferencesFromQuery(fields),
    fallbacks: fallbacksOfText(fields.getAll("fallbacks"), "stt"),
  };
}
