import type { Catalogue } from "../../catalogue/catalogue.ts";
import { ApiError } from "../../errors.ts";
import { fallbacksOf } from "../../planning/fallbacks.ts";
import { planTts } from "../../planning/plan-tts.ts";
import type { TtsPlan } from "../../planning/tts-request.ts";
import { preferencesFromBody } from "../../routing/preferences.ts";
import { cacheAllowed } from "../cache-opt-out.ts";
import { type Locator, locatorsOfBody } from "../../pronunciation/locators.ts";

/** OpenAI's own limit on `input`; longer text is 413 `tts_text_too_large`. */
export const MAX_INPUT_CHARACTERS = 4096;

/** OpenAI's speech is 24 kHz in every format but `opus`: other rates are resampled (or, for `mp3`, encoded from PCM), as SDK callers assume it. */
export const OPENAI_RATE = 24000;

/** The `response_format` values we can produce: all from the session's PCM, but `mp3` where the providers' own is OpenAI's. */
const RESPONSE_FORMATS = ["mp3", "opus", "aac", "flac", "pcm", "wav"] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

export interface OaiSpeechPlan extends TtsPlan {
  /** `pronunciation_dictionaries`, this router's own member (docs/pronunciation.md). */
  pronunciation: Locator[];
  text: string;
  responseFormat: ResponseFormat;
  /** `audio`: the bytes as they are; `sse`: OpenAI's speech events. */
  streamFormat: "audio" | "sse";
  /** `cache: false`: the TTS cache neither serves nor keeps this answer. */
  cache: boolean;
}

const missing = (param: string) => new ApiError("missing_required_parameter", `you must provide ${param}`, { param });

/** Reads a `POST /oai/audio/speech` body and plans it. Pure; throws `ApiError` (the planner's member names are OpenAI's here). */
export function planOaiSpeech(catalogue: Catalogue, body: unknown): OaiSpeechPlan {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
  const b = body as Record<string, unknown>;
  if (typeof b.model !== "string" || !b.model) throw missing("model");
  if (typeof b.input !== "string" || !b.input) throw missing("input");
  if ([...b.input].length > MAX_INPUT_CHARACTERS) throw new ApiError("tts_text_too_large", `input is longer than ${MAX_INPUT_CHARACTERS} characters`, { param: "input" });
  if (b.voice !== undefined && (typeof b.voice !== "string" || !b.voice)) throw new ApiError("invalid_request", "voice must be a non-empty string", { param: "voice" });
  const responseFormat = (b.response_format ?? "mp3") as ResponseFormat;
  if (!RESPONSE_FORMATS.includes(responseFormat)) {
    throw new ApiError("invalid_request", `response_format must be one of ${RESPONSE_FORMATS.join(", ")}`, { param: "response_format" });
  }
  const streamFormat = b.stream_format ?? "audio";
  if (streamFormat !== "audio" && streamFormat !== "sse") throw new ApiError("invalid_request", "stream_format must be audio or sse", { param: "stream_format" });
  const options: Record<string, string> = {};
  if (b.instructions !== undefined) {
    if (typeof b.instructions !== "string") throw new ApiError("invalid_request", "instructions must be a string", { param: "instructions" });
    options.instructions = b.instructions;
  }
  if (b.speed !== undefined && (typeof b.speed !== "number" || b.speed < 0.25 || b.speed > 4)) {
    throw new ApiError("invalid_request", "speed must be a number from 0.25 to 4.0", { param: "speed" });
  }
  const plan = planTts(catalogue, {
    model: b.model,
    voice: b.voice as string | undefined,
    format: responseFormat === "mp3" ? { mp3: { sampleRate: OPENAI_RATE } } : "pcm",
    speed: b.speed as number | undefined,
    options,
    preferences: preferencesFromBody(b.provider),
    fallbacks: fallbacksOf(b.fallbacks, "tts"),
  });
  return { ...plan, text: b.input, responseFormat, streamFormat, pronunciation: locatorsOfBody(b.pronunciation_dictionaries, "pronunciation_dictionaries"), cache: cacheAllowed(b.cache) };
}
