import type { Catalogue } from "../../catalogue/catalogue.ts";
import { ApiError } from "../../errors.ts";
import { fallbacksOfText } from "../../planning/fallbacks.ts";
import { planTts, speedOfOptions } from "../../planning/plan-tts.ts";
import type { Candidate } from "../../routing/candidate.ts";
import { cacheAllowed } from "../cache-opt-out.ts";
import { askedOfElevenLabs, elevenLabsTtsRequest, plannedOutput } from "./model.ts";
import { parseStreamInputFormat, type OutputFormat } from "./output-format.ts";
import { elevenLabsProviderOptions } from "./provider-options.ts";

/**
 * Query keys of `stream-input` that are ours. Every other key is a provider option, among them
 * `auto_mode`, `enable_logging`, `enable_ssml_parsing`, `language_code`, `apply_text_normalization`
 * and `inactivity_timeout` (also given to ElevenLabs, whose own socket must stay open as long as ours).
 */
const RESERVED_QUERY = ["model_id", "output_format", "authorization", "sync_alignment", "provider_order", "provider_only", "provider_ignore", "allow_fallbacks", "fallbacks", "cache"];
const DEFAULT_INACTIVITY_SECONDS = 20;
const MAX_INACTIVITY_SECONDS = 180;

export interface StreamInputPlan {
  candidates: Candidate[];
  voice: string;
  format: OutputFormat["format"];
  /** The PCM `output_format` promises (the provider's is converted to it); undefined for the providers' own MP3. */
  pcm?: OutputFormat["pcm"];
  /** The encoder that PCM goes through (MP3, Ogg Opus), if the format is made here. */
  transcode?: OutputFormat["transcode"];
  inactivitySeconds: number;
  /** `sync_alignment=true`: every audio frame carries the timings of the characters it starts. */
  syncAlignment: boolean;
  /** `cache=false`: the TTS cache neither serves nor keeps this session's utterances. */
  cache: boolean;
  /** The speed and the provider options, given what the init frame's fields translate to; the query wins. */
  speedAndOptions(fields: Record<string, string>): { speed?: number; options: Record<string, string> };
}

function inactivity(value: string | null): number {
  if (value === null || value === "") return DEFAULT_INACTIVITY_SECONDS;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > MAX_INACTIVITY_SECONDS) {
    throw new ApiError("invalid_request", `inactivity_timeout must be a whole number of seconds from 1 to ${MAX_INACTIVITY_SECONDS}`, { param: "inactivity_timeout" });
  }
  return seconds;
}

function syncAlignment(value: string | null): boolean {
  const v = (value || "false").toLowerCase();
  if (v !== "true" && v !== "false") throw new ApiError("invalid_request", "sync_alignment must be true or false", { param: "sync_alignment" });
  return v === "true";
}

/** Reads the `GET /el/v1/text-to-speech/{voice_id}/stream-input` query and routes it. Pure; throws `ApiError`. */
export function planStreamInput(catalogue: Catalogue, voice: string, query: URLSearchParams): StreamInputPlan {
  const modelId = query.get("model_id") || undefined;
  const asked = parseStreamInputFormat(query.get("output_format"));
  const inactivitySeconds = inactivity(query.get("inactivity_timeout"));
  const sync = syncAlignment(query.get("sync_alignment"));
  const speedAndOptions = (fields: Record<string, string>) => speedOfOptions(elevenLabsProviderOptions(query, RESERVED_QUERY, undefined, fields));
  speedAndOptions({}); // a bad enum or boolean in the query is told before the upgrade
  // The interface's contract: `mp3_*` is refused before the upgrade when every allowed provider emits only PCM, though LAME could make it.
  const { candidates, format } = planTts(catalogue, elevenLabsTtsRequest(catalogue, modelId, voice, askedOfElevenLabs(asked, true), query, {}, fallbacksOfText(query.getAll("fallbacks"), "tts")));
  const output = plannedOutput(asked, format);
  return { candidates, voice, format: output.format, pcm: output.pcm, transcode: output.transcode, inactivitySeconds, syncAlignment: sync, cache: cacheAllowed(query.get("cache")), speedAndOptions };
}
