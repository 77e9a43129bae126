import { ApiError } from "../../errors.ts";
import { providerOptions } from "../provider-options.ts";

// Provider options on /el: from the body's `provider_options` object, from unreserved query keys,
// and from `provider_options[<name>]=` (which wins). Values of enum and boolean options are
// case-insensitive and normalized to lower case; free-form values keep their case.

const BOOLEAN = new Set(["enable_logging", "enable_ssml_parsing", "auto_mode", "use_speaker_boost", "try_trigger_generation"]);
const ENUMS: Record<string, string[]> = {
  apply_text_normalization: ["auto", "on", "off"],
  transport: ["http", "websocket"],
};

function normalize(name: string, value: string): string {
  if (BOOLEAN.has(name)) {
    const v = value.toLowerCase();
    if (v !== "true" && v !== "false") throw new ApiError("invalid_request", `${name} must be true or false`, { param: name });
    return v;
  }
  const allowed = ENUMS[name];
  if (allowed) {
    const v = value.toLowerCase();
    if (!allowed.includes(v)) throw new ApiError("invalid_request", `${name} must be one of ${allowed.join(", ")}`, { param: name });
    return v;
  }
  return value;
}

function bodyOptions(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new ApiError("invalid_request", "provider_options must be an object", { param: "provider_options" });
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "object" && v !== null) throw new ApiError("invalid_request", `provider_options.${k} must be a string, number or boolean`, { param: "provider_options" });
    out[k] = String(v);
  }
  return out;
}

/**
 * Every provider option of an `/el` request, normalized: `fields` (what the endpoint's own fields
 * translate to), then the body's `provider_options`, then the query; `reserved` query keys are
 * the endpoint's own.
 */
export function elevenLabsProviderOptions(query: URLSearchParams, reserved: string[], body?: unknown, fields: Record<string, string> = {}): Record<string, string> {
  const merged = { ...fields, ...bodyOptions(body), ...providerOptions(query, reserved) };
  return Object.fromEntries(Object.entries(merged).map(([k, v]) => [k, normalize(k, v)]));
}

const VOICE_SETTINGS = ["stability", "similarity_boost", "style", "speed", "use_speaker_boost"];

/** ElevenLabs' `voice_settings` object as provider options; settings it does not name are left out. */
export function voiceSettingsOptions(settings: unknown): Record<string, string> {
  if (settings === undefined || settings === null) return {};
  if (typeof settings !== "object" || Array.isArray(settings)) throw new ApiError("invalid_request", "voice_settings must be an object", { param: "voice_settings" });
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(settings)) if (VOICE_SETTINGS.includes(k) && v !== null && v !== undefined) out[k] = String(v);
  return out;
}
