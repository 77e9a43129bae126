import type { Catalogue } from "../../catalogue/catalogue.ts";
import type { Binding, Capability } from "../../catalogue/types.ts";
import { ApiError } from "../../errors.ts";
import { preferencesFromQuery } from "../../routing/preferences.ts";
import { resolve } from "../../routing/resolve.ts";
import { routeMp3 } from "../mp3-routing.ts";
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

/** The candidates of an `/el` TTS request: its `model_id`, the path's voice, the format, the query's provider preferences. */
export function elevenLabsTtsCandidates(catalogue: Catalogue, modelId: string | undefined, voice: string, format: "pcm" | "mp3", query: URLSearchParams): Binding[] {
  const provider = providerOfModel(catalogue, modelId, "tts", query);
  return resolve(catalogue, { capability: "tts", model: modelId, provider: provider || undefined, voice, format, mode: "streaming", preferences: preferencesFromQuery(query) });
}

/**
 * The candidates for an `/el` TTS request and its output format as the session makes it: an asked
 * `mp3_<rate>_<bitrate>` that every candidate emits exactly (ElevenLabs' and Cartesia's
 * `mp3_44100_128`) is the providers' own, untouched; every other format is made from their PCM.
 */
export function routeElevenLabsTts(catalogue: Catalogue, modelId: string | undefined, voice: string, asked: OutputFormat, query: URLSearchParams): { candidates: Binding[]; output: OutputFormat } {
  const route = (format: "pcm" | "mp3") => elevenLabsTtsCandidates(catalogue, modelId, voice, format, query);
  if (asked.transcode?.codec !== "mp3") return { candidates: route(asked.format), output: asked };
  const { format, candidates } = routeMp3(route, { sampleRate: asked.sampleRate, kbps: asked.transcode.kbps });
  return { candidates, output: format === "mp3" ? { format, sampleRate: asked.sampleRate } : asked };
}
