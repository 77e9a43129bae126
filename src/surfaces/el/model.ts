import type { Catalogue } from "../../catalogue/catalogue.ts";
import type { Capability } from "../../catalogue/types.ts";
import { ApiError } from "../../errors.ts";
import { preferencesFromQuery } from "../../routing/preferences.ts";
import type { TtsFormatAsked, TtsRequest } from "../../planning/tts-request.ts";
import type { ModelChoice } from "../../routing/candidate.ts";
import type { OutputFormat } from "./output-format.ts";

/**
 * The provider an `/el` `model_id` names: a canonical `{provider}/{model}` names one; a bare model
 * must be served by exactly one provider among those `provider_only` allows (a model that several
 * serve needs the canonical form, or `provider_only`).
 */
export function providerOfModel(catalogue: Catalogue, modelId: string | undefined, capability: Capability, query: URLSearchParams): string {
  if (!modelId) throw new ApiError("model_required", "model_id is required", { param: "model_id" });
  const only = preferencesFromQuery(query).only;
  const providers = [...new Set(catalogue.lookup(modelId, capability).map((b) => b.provider.id))].filter((id) => !only || only.includes(id));
  if (providers.length > 1) {
    throw new ApiError("invalid_request", `model ${modelId} is served by ${providers.join(", ")}; name one as {provider}/{model}`, { param: "model_id" });
  }
  return providers[0] ?? ""; // unknown models are reported by routing, with its codes
}

/**
 * The typed request of an `/el` TTS call: its `model_id` (and the provider it names), the path's
 * voice, the format, the query's provider preferences, the fallback models (the body's, or the
 * query's for stream-input).
 */
export function elevenLabsTtsRequest(
  catalogue: Catalogue,
  modelId: string | undefined,
  voice: string,
  format: TtsFormatAsked,
  query: URLSearchParams,
  options: Record<string, string>,
  fallbacks?: ModelChoice[],
): TtsRequest {
  const provider = providerOfModel(catalogue, modelId, "tts", query);
  return { model: modelId, provider: provider || undefined, voice, format, options, preferences: preferencesFromQuery(query), fallbacks };
}

/**
 * The format an `/el` TTS session is asked for: an asked `mp3_<rate>_<bitrate>` may be the
 * providers' own when every candidate emits exactly that (ElevenLabs' and Cartesia's
 * `mp3_44100_128`); every other format is made from their PCM. `requireMp3Provider`: see `TtsFormatAsked`.
 */
export function askedOfElevenLabs(asked: OutputFormat, requireMp3Provider = false): TtsFormatAsked {
  if (asked.transcode?.codec !== "mp3") return asked.format;
  return { mp3: { sampleRate: asked.sampleRate, kbps: asked.transcode.kbps }, requireMp3Provider };
}

/** The output format as the session makes it, given the planned session format. */
export function plannedOutput(asked: OutputFormat, format: "pcm" | "mp3"): OutputFormat {
  return asked.transcode?.codec === "mp3" && format === "mp3" ? { format, sampleRate: asked.sampleRate } : asked;
}
