import type { ApiError } from "../../errors.ts";
import { currentRequestId } from "../../request-context.ts";
import { errorHeaders } from "../compat-access.ts";

/**
 * ElevenLabs' error envelope, `{detail: {message, status, ...extra, request_id}}`, which its SDK
 * hands to its error classes as the body (ElevenLabs' own details carry `request_id` too). A request with no key at all gets the flat `{error: "missing_api_key"}`
 * the interface shows.
 */
export function elevenLabsError(err: ApiError): Response {
  const status = EL_STATUS[err.code] ?? err.code;
  const body = err.code === "missing_api_key" ? { error: err.code } : { detail: { message: err.message, status, ...err.extra, ...requestIdField() } };
  return Response.json(body, { status: err.status, headers: errorHeaders(err) });
}

/** Our codes that ElevenLabs spells its own way: its two 429s (docs/limits.md). */
const EL_STATUS: Partial<Record<string, string>> = { rate_limited: "rate_limit_exceeded", concurrency_limited: "too_many_concurrent_requests" };

function requestIdField(): { request_id?: string } {
  const requestId = currentRequestId();
  return requestId ? { request_id: requestId } : {};
}
