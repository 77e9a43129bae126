import { DEFAULT_VAD, type VadOptions } from "../../audio/vad.ts";
import type { Catalogue } from "../../catalogue/catalogue.ts";
import type { Binding } from "../../catalogue/types.ts";
import { ApiError } from "../../errors.ts";
import { audioBytesPerSecond } from "../../ledger/usage.ts";
import type { SttAudioFormat } from "../../catalogue/types.ts";
import type { PortableSttOption, PortableValues, SttFamily, SttProvider } from "../../providers/types.ts";
import { preferencesFromQuery } from "../../routing/preferences.ts";
import { resolve } from "../../routing/resolve.ts";
import type { SttSessionParams } from "../../sessions/stt-events.ts";

// The /v1/stt query: every rule is checked before the upgrade (HTTP 400 with the flat envelope).

export const AUDIO_FORMATS: SttAudioFormat[] = ["pcm_8000", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"];

const DURATIONS = ["silence_duration_ms", "min_speech_duration_ms", "min_silence_duration_ms", "turn_timeout_ms"] as const;
const THRESHOLDS = ["speech_threshold", "turn_threshold", "eager_end_threshold"] as const;
const BOOLEANS = ["interim_results", "include_timestamps", "include_language_detection", "diarization", "formatting", "include_filler_words"] as const;
const STRINGS = ["language", "context"] as const;
const ROUTING = ["model", "audio_format", "provider", "provider_order", "provider_only", "provider_ignore", "allow_fallbacks"];
const KNOWN = new Set<string>([...ROUTING, "channels", "commit_strategy", "turn_detection", "keyterms", "event_format", ...DURATIONS, ...THRESHOLDS, ...BOOLEANS, ...STRINGS]);

export interface SttPlan extends SttSessionParams {
  candidates: Binding[];
  eventFormat: "normalized" | "provider";
}

const bad = (param: string, why: string) => new ApiError("invalid_request", `${param} ${why}`, { param });

function oneOf<T extends string>(params: URLSearchParams, name: string, values: readonly T[], fallback: T): T {
  const v = params.get(name);
  if (v === null) return fallback;
  if (!values.includes(v as T)) throw bad(name, `must be one of ${values.join(", ")}`);
  return v as T;
}

function number(params: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n) || n < min || n > max) throw bad(name, max === Infinity ? `must be a number >= ${min}` : `must be a number from ${min} to ${max}`);
  return n;
}

function bool(params: URLSearchParams, name: string): boolean | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  if (v !== "true" && v !== "false") throw bad(name, "must be true or false");
  return v === "true";
}

/** Reads and checks the query, routes it, and keeps the candidates whose family can honour it. */
export function planSttSession(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, params: URLSearchParams): SttPlan {
  const options: Record<string, string> = {};
  for (const key of params.keys()) {
    const native = /^provider_options\[([^\]]+)\]$/.exec(key);
    if (native) options[native[1]] = params.get(key)!;
    else if (!KNOWN.has(key)) throw bad(key, "is not a known parameter (provider-native settings go in provider_options[<name>])");
  }
  const audioFormatRaw = params.get("audio_format");
  if (!params.get("model")?.trim()) throw new ApiError("model_required", "a model is required");
  if (!audioFormatRaw) throw bad("audio_format", `is required: one of ${AUDIO_FORMATS.join(", ")}`);
  const audioFormat = oneOf(params, "audio_format", AUDIO_FORMATS, "pcm_16000");
  const sampleRate = Number(audioFormat.split("_")[1]);
  const channels = number(params, "channels", 1, 8) ?? 1;
  if (!Number.isInteger(channels)) throw bad("channels", "must be a whole number");
  const bytesPerSecond = audioBytesPerSecond(audioFormat, channels);

  const portable: PortableValues = {};
  for (const d of DURATIONS) {
    const v = number(params, d, 0, Infinity);
    if (v !== undefined) portable[d] = v;
  }
  for (const t of THRESHOLDS) {
    const v = number(params, t, 0, 1);
    if (v !== undefined) portable[t] = v;
  }
  for (const b of BOOLEANS) {
    const v = bool(params, b);
    if (v !== undefined) portable[b] = v;
  }
  for (const s of STRINGS) if (params.get(s) !== null) portable[s] = params.get(s)!;
  if (params.getAll("keyterms").length) portable.keyterms = params.getAll("keyterms");
  const explicit = new Set(Object.keys(portable) as PortableSttOption[]);
  const commitStrategy = oneOf(params, "commit_strategy", ["auto", "manual"] as const, "auto");
  const turnDetection = oneOf(params, "turn_detection", ["auto", "acoustic", "semantic"] as const, "auto");
  const eventFormat = oneOf(params, "event_format", ["normalized", "provider"] as const, "normalized");

  const routed = resolve(catalogue, {
    capability: "stt",
    model: params.get("model")!,
    provider: params.get("provider") || undefined,
    inputFormat: audioFormat,
    mode: "streaming",
    preferences: preferencesFromQuery(params),
  });

  const families = new Map<string, SttFamily>();
  let refusal: ApiError | undefined;
  const candidates = routed.filter((b) => {
    const provider = sttProvider(b.provider.id);
    const family = provider?.family(b.id);
    if (!provider || !family) return false; // configured, but no adapter for this model in this build
    const why = unsupported(family, { explicit, portable, commitStrategy, turnDetection, eventFormat, audioFormat, sampleRate, channels, options });
    if (why) {
      refusal ??= why;
      return false;
    }
    // The family could, but this build's adapter does not stream in this mode yet.
    if (eventFormat === "provider" ? !provider.passthrough : !provider.open) return false;
    families.set(b.provider.id, family);
    return true;
  });
  if (candidates.length === 0) throw refusal ?? new ApiError("no_matching_provider", `no provider in this build streams ${params.get("model")}`);

  const vad: VadOptions = {
    speechThreshold: number(params, "speech_threshold", 0, 1) ?? DEFAULT_VAD.speechThreshold,
    minSpeechDurationMs: number(params, "min_speech_duration_ms", 0, Infinity) ?? DEFAULT_VAD.minSpeechDurationMs,
    minSilenceDurationMs: number(params, "min_silence_duration_ms", 0, Infinity) ?? DEFAULT_VAD.minSilenceDurationMs,
    silenceDurationMs: number(params, "silence_duration_ms", 0, Infinity) ?? DEFAULT_VAD.silenceDurationMs,
  };
  return {
    candidates,
    families,
    audioFormat,
    sampleRate,
    channels,
    bytesPerSecond,
    language: params.get("language") ?? undefined,
    interim: bool(params, "interim_results"),
    commitStrategy,
    turnDetection,
    eventFormat,
    vad,
    portable,
    options,
  };
}

interface Asked {
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

/** Why this family cannot serve the request as asked, or undefined when it can. */
function unsupported(family: SttFamily, asked: Asked): ApiError | undefined {
  const refuse = (param: string, why: string) => new ApiError("unsupported_stt_option", `${param}: ${why} (${family.name})`, { param });
  if (!family.inputFormats.includes(asked.audioFormat)) return new ApiError("invalid_request", `${family.name} does not take ${asked.audioFormat} audio`, { param: "audio_format" });
  for (const option of asked.explicit) if (!family.portableOptions.includes(option)) return refuse(option, "this model family cannot honour it");
  for (const [option, [min, max]] of Object.entries(family.optionRanges ?? {}) as [PortableSttOption, [number, number]][]) {
    const value = asked.portable[option as keyof PortableValues];
    if (typeof value === "number" && (value < min || value > max)) return refuse(option, `must be from ${min} to ${max} for this family`);
  }
  if (asked.turnDetection !== "auto" && !family.turnStyles.includes(asked.turnDetection)) {
    return refuse("turn_detection", `${asked.turnDetection} turns are not available; this family offers ${family.turnStyles.join(", ")}`);
  }
  if (asked.commitStrategy === "manual" && !family.commitFrame) return refuse("commit_strategy", "this family has no commit frame");
  if (asked.eventFormat === "provider" && !family.passthrough) return refuse("event_format", "provider passthrough needs an upstream realtime WebSocket, which this family does not have");
  const { encoding, sampleRate, channels, encodingValues = { pcm: "linear16", ulaw: "mulaw" } } = family.audioOptions;
  const conflict = (name: string | undefined, expected: string) => name !== undefined && asked.options[name] !== undefined && asked.options[name].toLowerCase() !== expected.toLowerCase();
  if (
    conflict(sampleRate, String(asked.sampleRate)) ||
    conflict(channels, String(asked.channels)) ||
    conflict(encoding, asked.audioFormat.startsWith("ulaw") ? encodingValues.ulaw : encodingValues.pcm)
  ) {
    return new ApiError("conflicting_audio_format", `provider_options declare audio that differs from audio_format=${asked.audioFormat}`, { param: "provider_options" });
  }
  return undefined;
}
