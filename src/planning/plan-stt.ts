import { DEFAULT_VAD, type VadOptions } from "../audio/vad.ts";
import type { Catalogue } from "../catalogue/catalogue.ts";
import { ApiError } from "../errors.ts";
import { audioBytesPerSecond } from "../ledger/usage.ts";
import type { PortableSttOption, PortableValues, SttFamily, SttProvider } from "../providers/stt-types.ts";
import { byLink, familyKey, inLink, linkModel } from "../routing/candidate.ts";
import { router } from "../routing/resolve.ts";
import { refusal } from "./members.ts";
import { unsupported } from "./stt-families.ts";
import { AUDIO_FORMATS, type SttPlan, type SttRequest } from "./stt-request.ts";

const DURATIONS = ["silence_duration_ms", "min_speech_duration_ms", "min_silence_duration_ms", "turn_timeout_ms"] as const;
const THRESHOLDS = ["speech_threshold", "turn_threshold", "eager_end_threshold"] as const;
/** The portable options that are numbers (milliseconds from 0, thresholds from 0 to 1). */
export const NUMERIC_OPTIONS = [...DURATIONS, ...THRESHOLDS];

/** A number the request may hold, checked against its range (a wire's text that is no number arrives as NaN). */
function inRange(member: string, value: unknown, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
    throw refusal("invalid_request", member, max === Infinity ? ` must be a number >= ${min}` : ` must be a number from ${min} to ${max}`);
  }
  return value;
}

/**
 * Checks a streaming STT request, routes it once, and keeps the candidates whose family can
 * honour it (and whose adapter in this build streams it so). Pure; throws `ApiError` naming the
 * request's member (`audioFormat`, `portable.speech_threshold`, …), for the surface to rename.
 */
export function planStt(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, req: SttRequest): SttPlan {
  const { audioFormat, portable, options } = req;
  // The model first (a request naming nothing is told that), then the request's own values, then the rest of routing.
  const route = router(catalogue, { capability: "stt", model: req.model, provider: req.provider, inputFormat: audioFormat, mode: "streaming", preferences: req.preferences, fallbacks: req.fallbacks });
  if (!audioFormat) throw refusal("invalid_request", "audioFormat", ` is required: one of ${AUDIO_FORMATS.join(", ")}`);
  const sampleRate = Number(audioFormat.split("_")[1]);
  const channels = inRange("channels", req.channels, 1, 8) ?? 1;
  if (!Number.isInteger(channels)) throw refusal("invalid_request", "channels", " must be a whole number");
  for (const d of DURATIONS) inRange(`portable.${d}`, portable[d], 0, Infinity);
  for (const t of THRESHOLDS) inRange(`portable.${t}`, portable[t], 0, 1);
  const explicit = new Set(Object.keys(portable) as PortableSttOption[]);
  const commitStrategy = req.commitStrategy ?? "auto";
  const turnDetection = req.turnDetection ?? "auto";
  const eventFormat = req.eventFormat ?? "normalized";

  const routed = route(undefined);

  const families = new Map<string, SttFamily>();
  // Each model of the chain must be served as asked by one of its providers at least: a fallback that cannot is refused, naming it.
  const candidates = byLink(routed).flatMap((link) =>
    inLink(link[0].fallback, () => {
      let refused: ApiError | undefined;
      const able = link.filter((b) => {
        const provider = sttProvider(b.provider.id);
        const family = provider?.family(b.id);
        if (!provider || !family) return false; // configured, but no adapter for this model in this build
        const why = unsupported(family, { explicit, portable, commitStrategy, turnDetection, eventFormat, audioFormat, sampleRate, channels, options });
        if (why) {
          refused ??= why;
          return false;
        }
        // The family could, but this build's adapter does not stream in this mode yet.
        if (eventFormat === "provider" ? !provider.passthrough : !provider.open) return false;
        families.set(familyKey(b.provider.id, b.canonical), family);
        return true;
      });
      if (able.length === 0) throw refused ?? new ApiError("no_matching_provider", `no provider in this build streams ${linkModel(link[0], req)}`);
      return able;
    }),
  );

  return {
    candidates,
    families,
    audioFormat,
    sampleRate,
    channels,
    bytesPerSecond: audioBytesPerSecond(audioFormat, channels),
    language: typeof portable.language === "string" ? portable.language : undefined,
    interim: typeof portable.interim_results === "boolean" ? portable.interim_results : undefined,
    commitStrategy,
    turnDetection,
    eventFormat,
    vad: vadOf(portable),
    portable,
    options,
  };
}

const number = (value: PortableValues[keyof PortableValues]) => (typeof value === "number" ? value : undefined);

/** The router VAD's settings: the request's, else the defaults. */
function vadOf(portable: PortableValues): VadOptions {
  return {
    speechThreshold: number(portable.speech_threshold) ?? DEFAULT_VAD.speechThreshold,
    minSpeechDurationMs: number(portable.min_speech_duration_ms) ?? DEFAULT_VAD.minSpeechDurationMs,
    minSilenceDurationMs: number(portable.min_silence_duration_ms) ?? DEFAULT_VAD.minSilenceDurationMs,
    silenceDurationMs: number(portable.silence_duration_ms) ?? DEFAULT_VAD.silenceDurationMs,
  };
}
