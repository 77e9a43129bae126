import type { ApiError } from "../../errors.ts";
import { errorHeaders } from "../compat-access.ts";

// The OpenAI error object, `{error: {message, type, param, code}}`, which the OpenAI SDK turns
// into its error classes by status (AuthenticationError, BadRequestError, RateLimitError, …).

const TYPES: Record<number, string> = {
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  501: "not_implemented_error",
};

/** Our codes that the OpenAI API spells differently. */
const OPENAI_CODES: Partial<Record<string, string>> = { model_required: "missing_required_parameter", voice_required: "missing_required_parameter" };
const PARAMS: Partial<Record<string, string>> = { model_required: "model", voice_required: "voice" };

/**
 * An empty balance is OpenAI's 429 `insufficient_quota` (type and code), which the SDK raises as
 * `RateLimitError` and OpenAI apps already handle; our 402 is never seen on /oai. The SDK retries a
 * 429 unless told not to: like every 4xx it carries `x-should-retry: false` (retry-verdict.ts).
 */
const QUOTA_STATUS = 429;

/** The status and `{message, type, param, code}` object OpenAI would answer for the error. */
export function openAiErrorObject(err: ApiError) {
  const quota = err.code === "insufficient_balance";
  const status = quota ? QUOTA_STATUS : err.status;
  const type = quota ? "insufficient_quota" : (TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error"));
  const param = (err.extra.param as string | undefined) ?? PARAMS[err.code] ?? null;
  const code = quota ? "insufficient_quota" : (OPENAI_CODES[err.code] ?? err.code);
  return { status, error: { message: err.message, type, param, code } };
}

export function openAiError(err: ApiError): Response {
  const { status, error } = openAiErrorObject(err);
  return Response.json({ error }, { status, headers: errorHeaders(err) });
}
