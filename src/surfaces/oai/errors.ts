import type { ApiError } from "../../errors.ts";
import { errorHeaders } from "../compat-access.ts";

// The OpenAI error object, `{error: {message, type, param, code}}`, which the OpenAI SDK turns
// into its error classes by status (AuthenticationError, BadRequestError, …).

const TYPES: Record<number, string> = {
  401: "authentication_error",
  402: "insufficient_quota",
  403: "permission_error",
  404: "not_found_error",
  429: "rate_limit_error",
  501: "not_implemented_error",
};

/** Our codes that the OpenAI API spells differently. */
const OPENAI_CODES: Partial<Record<string, string>> = { model_required: "missing_required_parameter", voice_required: "missing_required_parameter" };
const PARAMS: Partial<Record<string, string>> = { model_required: "model", voice_required: "voice" };

export function openAiError(err: ApiError): Response {
  const type = TYPES[err.status] ?? (err.status >= 500 ? "api_error" : "invalid_request_error");
  const param = (err.extra.param as string | undefined) ?? PARAMS[err.code] ?? null;
  const body = { error: { message: err.message, type, param, code: OPENAI_CODES[err.code] ?? err.code } };
  return Response.json(body, { status: err.status, headers: errorHeaders(err) });
}
