import type { ApiError } from "../../errors.ts";
import { errorHeaders } from "../compat-access.ts";

/**
 * ElevenLabs' error envelope, `{detail: {message, status, ...extra}}`, which its SDK hands to its
 * error classes as the body. A request with no key at all gets the flat `{error: "missing_api_key"}`
 * the interface shows.
 */
export function elevenLabsError(err: ApiError): Response {
  const body = err.code === "missing_api_key" ? { error: err.code } : { detail: { message: err.message, status: err.code, ...err.extra } };
  return Response.json(body, { status: err.status, headers: errorHeaders(err) });
}
