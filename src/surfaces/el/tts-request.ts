import type { Catalogue } from "../../catalogue/catalogue.ts";
import { ApiError } from "../../errors.ts";
import { fallbacksOf } from "../../planning/fallbacks.ts";
import { planTts } from "../../planning/plan-tts.ts";
import type { TtsPlan } from "../../planning/tts-request.ts";
import { cacheAllowed } from "../cache-opt-out.ts";
import { type Locator, locatorsOfBody } from "../../pronunciation/locators.ts";
import { askedOfElevenLabs, elevenLabsTtsRequest, plannedOutput } from "./model.ts";
import { parseOutputFormat, type OutputFormat } from "./output-format.ts";
import { elevenLabsProviderOptions, voiceSettingsOptions } from "./provider-options.ts";

/** ElevenLabs' own longest request (Flash v2.5); longer text is 413 `tts_text_too_large`. */
export const MAX_TEXT_CHARACTERS = 40_000;

/** Query keys of the ElevenLabs TTS endpoints that are theirs, not provider options. */
const RESERVED_QUERY = ["output_format", "optimize_streaming_latency", "enable_logging", "provider_order", "provider_only", "provider_ignore", "allow_fallbacks", "cache"];

export interface ElevenLabsTtsPlan extends TtsPlan {
  text: string;
  voice: string;
  /** `output_format` as the caller spelled it, and what it asks the session for. */
  outputFormat: string;
  format: OutputFormat["format"];
  sampleRate: number;
  pcm?: OutputFormat["pcm"];
  transcode?: OutputFormat["transcode"];
  /** The `with-timestamps` endpoints: character timings asked of the providers. */
  alignment: boolean;
  /** `cache: false` in the body or `cache=false` in the query: the TTS cache neither serves nor keeps this answer. */
  cache: boolean;
  pronunciation: Locator[];
}

/**
 * Reads `POST /el/v1/text-to-speech/{voice_id}[/stream][/with-timestamps]` (path, query, JSON
 * body) and plans it. Pure. With timestamps every format is made here from the providers' PCM,
 * even an MP3 they would emit themselves: providers time PCM sessions (Cartesia's MP3 comes over
 * HTTP, which has no timings).
 */
export function planElevenLabsTts(catalogue: Catalogue, voice: string, query: URLSearchParams, body: unknown, timestamps = false): ElevenLabsTtsPlan {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
  const b = body as Record<string, unknown>;
  if (typeof b.text !== "string" || !b.text) throw new ApiError("invalid_request", "text is required", { param: "text" });
  if (b.text.length > MAX_TEXT_CHARACTERS) throw new ApiError("tts_text_too_large", `text is longer than ${MAX_TEXT_CHARACTERS} characters`, { param: "text" });
  // Unreserved query keys are provider options: the chain would be sent to the provider, unread.
  if (query.has("fallbacks")) throw new ApiError("invalid_request", "fallbacks goes in the JSON body on this endpoint (the query form is stream-input's)", { param: "fallbacks" });
  const modelId = typeof b.model_id === "string" ? b.model_id : undefined;
  const outputFormat = query.get("output_format") || "mp3_44100_128";
  const asked = parseOutputFormat(outputFormat);

  const options = voiceSettingsOptions(b.voice_settings);
  for (const k of ["language_code", "apply_text_normalization", "seed", "previous_text", "next_text"]) if (b[k] !== undefined && b[k] !== null) options[k] = String(b[k]);
  for (const k of ["optimize_streaming_latency", "enable_logging"]) if (query.has(k)) options[k] = query.get(k)!;

  const providerOptions = elevenLabsProviderOptions(query, RESERVED_QUERY, b.provider_options, options);
  const plan = planTts(catalogue, elevenLabsTtsRequest(catalogue, modelId, voice, timestamps ? asked.format : askedOfElevenLabs(asked), query, providerOptions, fallbacksOf(b.fallbacks, "tts")));
  const pronunciation = locatorsOfBody(b.pronunciation_dictionary_locators, "pronunciation_dictionary_locators");
  return { ...plan, text: b.text, voice, outputFormat, ...plannedOutput(asked, plan.format), alignment: timestamps, pronunciation, cache: cacheAllowed(b.cache) && cacheAllowed(query.get("cache")) };
}
