import type { Catalogue } from "../../catalogue/catalogue.ts";
import { ApiError } from "../../errors.ts";
import { fallbacksOfText } from "../../planning/fallbacks.ts";
import { planTts } from "../../planning/plan-tts.ts";
import type { TtsPlan, TtsRequest } from "../../planning/tts-request.ts";
import { preferencesFromQuery } from "../../routing/preferences.ts";
import { cacheAllowed } from "../cache-opt-out.ts";
import { type Locator, locatorsOfQuery } from "../../pronunciation/locators.ts";
import { providerOptions } from "../provider-options.ts";

/** A `/v1/tts` session's plan: the typed request's, and what only this channel has. */
export interface NativeTtsPlan extends TtsPlan {
  autoFlush: boolean;
  /** `alignment=true`: `service.tts_alignment` events with the characters' times. */
  alignment: boolean;
  /** `cache=false`: the TTS cache neither serves nor keeps this session's utterances. */
  cache: boolean;
  /** `pronunciation_dictionaries=id[:version_id],…`. */
  pronunciation: Locator[];
}

const RESERVED = [
  "model",
  "provider",
  "voice",
  "format",
  "auto_flush",
  "alignment",
  "cache",
  "provider_order",
  "provider_only",
  "provider_ignore",
  "allow_fallbacks",
  "fallbacks",
  "pronunciation_dictionaries",
];

/** The `/v1/tts` query as a typed request, and the channel's own settings. Throws `ApiError`. */
export function readTtsQuery(params: URLSearchParams): { request: TtsRequest; autoFlush: boolean; alignment: boolean; cache: boolean } {
  const format = params.get("format") ?? "pcm";
  if (format !== "pcm" && format !== "mp3") throw new ApiError("invalid_request", "format must be pcm or mp3");
  const alignment = params.get("alignment") ?? "false";
  if (alignment !== "true" && alignment !== "false") throw new ApiError("invalid_request", "alignment must be true or false", { param: "alignment" });
  return {
    request: {
      model: params.get("model") ?? undefined,
      provider: params.get("provider") || undefined,
      voice: params.get("voice") || undefined,
      format,
      options: providerOptions(params, RESERVED),
      preferences: preferencesFromQuery(params),
      fallbacks: fallbacksOfText(params.getAll("fallbacks"), "tts"),
    },
    autoFlush: params.get("auto_flush") !== "false",
    alignment: alignment === "true",
    cache: cacheAllowed(params.get("cache")),
  };
}

/** Reads the `/v1/tts` query and plans it. Pure; throws `ApiError` (the request's member names are this query's). */
export function planTtsSession(catalogue: Catalogue, params: URLSearchParams): NativeTtsPlan {
  const { request, autoFlush, alignment, cache } = readTtsQuery(params);
  return { ...planTts(catalogue, request), autoFlush, alignment, cache, pronunciation: locatorsOfQuery(params.get("pronunciation_dictionaries")) };
}

/** The plans of the queries asked lately, per catalogue (which never changes once built). */
const planned = new WeakMap<Catalogue, Map<string, NativeTtsPlan>>();
const PLANS_KEPT = 1_000;

/**
 * `planTtsSession` once per query string (`search`, the URL's query as sent): planning is pure, and
 * a voice app's sessions ask the same query again and again. The plan is frozen: the sessions that
 * asked the same query share it. A refusal is not kept (it is thrown each time, as planned).
 */
export function plannedTtsSession(catalogue: Catalogue, search: string, params: URLSearchParams): NativeTtsPlan {
  let plans = planned.get(catalogue);
  if (!plans) planned.set(catalogue, (plans = new Map()));
  const kept = plans.get(search);
  if (kept) return kept;
  const plan = planTtsSession(catalogue, params);
  for (const part of [plan.candidates, plan.options, plan.pronunciation, plan]) Object.freeze(part);
  if (plans.size >= PLANS_KEPT) plans.clear();
  plans.set(search, plan);
  return plan;
}
