import type { Catalogue } from "../../catalogue/catalogue.ts";
import type { Binding } from "../../catalogue/types.ts";
import { ApiError } from "../../errors.ts";
import { preferencesFromBody } from "../../routing/preferences.ts";
import { resolve } from "../../routing/resolve.ts";
import { routeMp3 } from "../mp3-routing.ts";

/** OpenAI's own limit on `input`; longer text is 413 `tts_text_too_large`. */
export const MAX_INPUT_CHARACTERS = 4096;

/** OpenAI's speech is 24 kHz in every format but `opus`: other rates are resampled (or, for `mp3`, encoded from PCM), as SDK callers assume it. */
export const OPENAI_RATE = 24000;

/** The `response_format` values we can produce: all from the session's PCM, but `mp3` where the providers' own is OpenAI's. */
const RESPONSE_FORMATS = ["mp3", "opus", "aac", "flac", "pcm", "wav"] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

export interface OaiSpeechPlan {
  candidates: Binding[];
  text: string;
  voice?: string;
  responseFormat: ResponseFormat;
  /** `audio`: the bytes as they are; `sse`: OpenAI's speech events. */
  streamFormat: "audio" | "sse";
  /** What the session carries: `mp3` only for the providers' own, passed through. */
  format: "pcm" | "mp3";
  options: Record<string, string>;
}

const missing = (param: string) => new ApiError("missing_required_parameter", `you must provide ${param}`, { param });

/** Reads a `POST /oai/audio/speech` body and routes it. Pure; throws `ApiError`. */
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
  if (b.speed !== undefined) {
    if (typeof b.speed !== "number" || b.speed < 0.25 || b.speed > 4) throw new ApiError("invalid_request", "speed must be a number from 0.25 to 4.0", { param: "speed" });
    options.speed = String(b.speed);
  }
  const voice = b.voice as string | undefined;
  const preferences = preferencesFromBody(b.provider);
  const route = (format: "pcm" | "mp3") => resolve(catalogue, { capability: "tts", model: b.model as string, voice, format, mode: "streaming", preferences });
  const { format, candidates } = responseFormat === "mp3" ? routeMp3(route, { sampleRate: OPENAI_RATE }) : { format: "pcm" as const, candidates: route("pcm") };
  return { candidates: withSpeed(candidates, b.speed as number | undefined), text: b.input, voice, responseFormat, streamFormat, format, options };
}

/**
 * A speed other than 1.0 only goes to providers that honour it (fallback stays among them): those
 * that take any speed, and those whose range holds it; when
 * none of the candidates can, 400 naming `speed` rather than audio at the wrong pace.
 */
function withSpeed(candidates: Binding[], speed: number | undefined): Binding[] {
  if (speed === undefined || speed === 1) return candidates;
  const able = candidates.filter(({ provider: { ttsSpeed: range } }) => range === true || (range && speed >= range.min && speed <= range.max));
  if (able.length === 0) throw new ApiError("invalid_request", `speed ${speed} cannot be honoured by ${candidates.map((b) => b.provider.id).join(", ")}: omit it or use 1.0`, { param: "speed" });
  return able;
}
