import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Binding, Capability, TtsFormat } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { ProviderPreferences } from "./preferences.ts";

export interface RouteRequest {
  capability: Capability;
  /** Bare provider id, canonical slug, alias, or `{provider}/{id}`. */
  model?: string;
  /** Pins one provider. */
  provider?: string;
  voice?: string;
  format?: TtsFormat;
  /** STT: the audio the client will send (`pcm_16000`, …); a refusal names the member `audioFormat`. */
  inputFormat?: string;
  mode: "streaming" | "synchronous";
  preferences: ProviderPreferences;
}

/**
 * The ordered candidate bindings able to serve a request; the first is tried first, the rest are
 * fallbacks. Pure: the same catalogue and request give the same answer, with no I/O.
 */
export function resolve(catalogue: Catalogue, req: RouteRequest): Binding[] {
  return router(catalogue, req)(req.format);
}

/**
 * `resolve` in two steps, for a planner that weighs several output formats or checks the request
 * between them: the model, mode, provider and preferences are decided once, here; the returned
 * function finishes the routing for one format (`req.format` is not read).
 */
export function router(catalogue: Catalogue, req: RouteRequest): (format: TtsFormat | undefined) => Binding[] {
  const model = req.model?.trim();
  if (!model) throw new ApiError("model_required", "a model is required");

  let candidates = catalogue.lookup(model, req.capability);
  if (candidates.length === 0) {
    throw new ApiError("model_not_found", catalogue.knows(model) ? `model ${model} is not a ${req.capability} model` : `model ${model} is not served by any configured provider`);
  }

  candidates = candidates.filter((b) => (req.mode === "streaming" ? b.streaming : b.synchronous));
  if (candidates.length === 0) {
    throw new ApiError("no_matching_provider", `no provider serves ${model} for ${req.mode} ${req.capability}`);
  }

  const { only, ignore } = req.preferences;
  const servingAnywhere = new Set(candidates.map((b) => b.provider.id));
  candidates = candidates.filter((b) => (!only || only.includes(b.provider.id)) && !ignore?.includes(b.provider.id));
  if (req.provider) {
    if (!servingAnywhere.has(req.provider)) {
      throw new ApiError("no_matching_provider", `provider ${req.provider} does not serve ${model}`);
    }
    const pinned = req.provider;
    candidates = candidates.filter((b) => b.provider.id === pinned);
  }
  if (candidates.length === 0) {
    throw new ApiError("provider_not_allowed", `the provider preferences exclude every provider of ${model}`);
  }
  const allowed = candidates;
  return (format) => finish(allowed, model, format, req);
}

/** The allowed candidates that produce `format`, take the input, have their voice, in the preferred order. */
function finish(allowed: Binding[], model: string, format: TtsFormat | undefined, req: RouteRequest): Binding[] {
  let candidates = allowed;
  if (format) {
    candidates = candidates.filter((b) => b.formats?.includes(format));
    if (candidates.length === 0) {
      throw new ApiError("invalid_output_format", `no allowed provider of ${model} produces ${format}`);
    }
  }

  if (req.inputFormat) {
    const input = req.inputFormat;
    candidates = candidates.filter((b) => !b.inputFormats || b.inputFormats.includes(input));
    if (candidates.length === 0) throw new ApiError("invalid_request", `no allowed provider of ${model} takes ${input} audio`, { param: "audioFormat" });
  }

  if (!req.voice) {
    candidates = candidates.filter((b) => b.capability === "stt" || !b.provider.requiresVoice);
    if (candidates.length === 0) throw new ApiError("voice_required", `the provider of ${model} requires a voice`);
  }

  const { order, allowFallbacks } = req.preferences;
  if (order?.length) {
    const rank = (b: Binding) => {
      const i = order.indexOf(b.provider.id);
      return i === -1 ? order.length : i;
    };
    candidates = candidates
      .map((b, i) => ({ b, i }))
      .sort((x, y) => rank(x.b) - rank(y.b) || x.i - y.i)
      .map((x) => x.b);
  }

  return allowFallbacks ? candidates : candidates.slice(0, 1);
}
