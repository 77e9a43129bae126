import type { Catalogue } from "../../catalogue/catalogue.ts";
import type { Binding } from "../../catalogue/types.ts";
import { ApiError } from "../../errors.ts";
import { preferencesFromQuery } from "../../routing/preferences.ts";
import { resolve } from "../../routing/resolve.ts";
import { providerOptions } from "../provider-options.ts";

export interface TtsPlan {
  candidates: Binding[];
  voice?: string;
  format: "pcm" | "mp3";
  autoFlush: boolean;
  /** `alignment=true`: `service.tts_alignment` events with the characters' times. */
  alignment: boolean;
  options: Record<string, string>;
}

const RESERVED = ["model", "provider", "voice", "format", "auto_flush", "alignment", "provider_order", "provider_only", "provider_ignore", "allow_fallbacks"];

/** Reads the `/v1/tts` query and routes it. Pure; throws `ApiError`. */
export function planTtsSession(catalogue: Catalogue, params: URLSearchParams): TtsPlan {
  const format = params.get("format") ?? "pcm";
  if (format !== "pcm" && format !== "mp3") throw new ApiError("invalid_request", "format must be pcm or mp3");
  const alignment = params.get("alignment") ?? "false";
  if (alignment !== "true" && alignment !== "false") throw new ApiError("invalid_request", "alignment must be true or false", { param: "alignment" });
  const voice = params.get("voice") || undefined;
  const candidates = resolve(catalogue, {
    capability: "tts",
    model: params.get("model") ?? undefined,
    provider: params.get("provider") || undefined,
    voice,
    format,
    mode: "streaming",
    preferences: preferencesFromQuery(params),
  });
  return {
    candidates,
    voice,
    format,
    autoFlush: params.get("auto_flush") !== "false",
    alignment: alignment === "true",
    options: providerOptions(params, RESERVED),
  };
}
