import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Binding, Capability, TtsFormat } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import { type Candidate, inLink, MAX_FALLBACKS, type ModelChoice } from "./candidate.ts";
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
  /** Models tried, in order, after the primary's providers (each with its own voice, TTS). */
  fallbacks?: ModelChoice[];
}

/**
 * The ordered candidates able to serve a request: the primary model's bindings, then each fallback
 * model's; the first is tried first, the rest are fallbacks. Pure: the same catalogue and request
 * give the same answer, with no I/O.
 */
export function resolve(catalogue: Catalogue, req: RouteRequest): Candidate[] {
  return router(catalogue, req)(req.format);
}

/**
 * `resolve` in two steps, for a planner that weighs several output formats or checks the request
 * between them: each model of the chain, its mode, provider and preferences are decided once,
 * here; the returned function finishes the routing for one format (`req.format` is not read).
 * Every fallback is checked as the primary is, for the same request (its format, its input, its
 * voice): one that cannot serve it is refused naming it (`fallbacks[i].model`, `fallbacks[i].voice`),
 * not dropped. The `provider` pin is the primary's; a fallback names its provider as `{provider}/{id}`.
 */
export function router(catalogue: Catalogue, req: RouteRequest): (format: TtsFormat | undefined) => Candidate[] {
  const fallbacks = req.fallbacks ?? [];
  if (fallbacks.length > MAX_FALLBACKS) throw new ApiError("invalid_request", `fallbacks names at most ${MAX_FALLBACKS} models`, { param: "fallbacks" });
  const links = [
    linkRouter(catalogue, req, { model: req.model, voice: req.voice, provider: req.provider }),
    ...fallbacks.map((f, i) => inLink(i, () => linkRouter(catalogue, req, { model: f.model, voice: f.voice, fallback: i }))),
  ];
  return (format) => {
    const seen = new Set<string>();
    const candidates = links
      .flatMap((finish, i) => (i === 0 ? finish(format) : inLink(i - 1, () => finish(format))))
      .filter((c) => {
        const key = `${c.provider.id}\u0000${c.id}\u0000${c.voice ?? ""}`;
        return !seen.has(key) && seen.add(key);
      });
    return req.preferences.allowFallbacks ? candidates : candidates.slice(0, 1);
  };
}

/** One model of the chain: its voice, the provider pin (the primary's only), its index among the fallbacks. */
interface Link {
  model?: string;
  voice?: string;
  provider?: string;
  fallback?: number;
}

function linkRouter(catalogue: Catalogue, req: RouteRequest, link: Link): (format: TtsFormat | undefined) => Candidate[] {
  const model = link.model?.trim();
  if (!model) throw new ApiError("model_required", "a model is required");
  if (link.fallback !== undefined && link.voice !== undefined && req.capability === "stt") throw new ApiError("invalid_request", "speech to text takes no voice", { param: "voice" });
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
  if (link.provider) {
    if (!servingAnywhere.has(link.provider)) {
      throw new ApiError("no_matching_provider", `provider ${link.provider} does not serve ${model}`);
    }
    const pinned = link.provider;
    candidates = candidates.filter((b) => b.provider.id === pinned);
  }
  if (candidates.length === 0) {
    throw new ApiError("provider_not_allowed", `the provider preferences exclude every provider of ${model}`);
  }
  const allowed = candidates;
  return (format) =>
    finish(allowed, model, format, req, link.voice).map((b) => ({
      ...b,
      ...(link.voice === undefined ? {} : { voice: link.voice }),
      ...(link.fallback === undefined ? {} : { fallback: link.fallback }),
    }));
}

/** The allowed candidates that produce `format`, take the input, have their voice, in the preferred order. */
function finish(allowed: Binding[], model: string, format: TtsFormat | undefined, req: RouteRequest, voice: string | undefined): Binding[] {
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

  if (!voice) {
    candidates = candidates.filter((b) => b.capability === "stt" || !b.provider.requiresVoice);
    if (candidates.length === 0) throw new ApiError("voice_required", `the provider of ${model} requires a voice`);
  }

  const { order } = req.preferences;
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

  return candidates;
}
