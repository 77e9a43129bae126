import { ApiError } from "../errors.ts";

/**
 * Whether a request lets the router's TTS cache serve it (docs/tts-cache.md): `cache: false` in a
 * body or `cache=false` in a query opts out; absent, it may. Anything else is 400 naming `cache`.
 */
export function cacheAllowed(value: unknown): boolean {
  if (value === undefined || value === null || value === true || value === "true") return true;
  if (value === false || value === "false") return false;
  throw new ApiError("invalid_request", "cache must be true or false", { param: "cache" });
}
