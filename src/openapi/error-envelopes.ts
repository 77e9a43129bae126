import { ERRORS } from "../errors.ts";
import type { ResponseObject, Schema } from "./document-types.ts";
import { json, REFUSAL_HEADERS, RETRY_AFTER, ANSWER_HEADERS } from "./operation.ts";
import { constant, integer, nullable, object, oneOfValues, ref, string } from "./schema.ts";

// The three error envelopes (src/errors.ts `nativeEnvelope`, surfaces/oai/errors.ts,
// surfaces/el/errors.ts) as schemas, and each operation's failures in its surface's envelope.

export type Surface = "native" | "el" | "oai";

const CODES = Object.keys(ERRORS);

export const ERROR_SCHEMAS: Record<string, Schema> = {
  NativeError: object(
    { error: oneOfValues(CODES, "The error code (src/errors.ts)"), message: string("What went wrong, for people") },
    {
      request_id: string("The answer's `x-request-id`"),
      param: string("The parameter, field or header at fault"),
      retry_after: integer("Seconds to wait before trying again (also `Retry-After`)"),
      limit_bytes: integer("The body limit that was passed (`payload_too_large`)"),
    },
    "The native flat envelope: `{error: <code>}` with a message beside it",
  ),
  OpenAIError: object(
    {
      error: object({
        message: string(),
        type: oneOfValues(["invalid_request_error", "authentication_error", "permission_error", "not_found_error", "rate_limit_error", "insufficient_quota", "not_implemented_error", "api_error"]),
        param: nullable(string("The field at fault")),
        code: nullable(string("The router's error code; `missing_required_parameter` for a missing model or voice, `insufficient_quota` for an empty balance")),
      }),
    },
    {},
    "OpenAI's error object, which the OpenAI SDK turns into its error classes",
  ),
  ElevenLabsError: object(
    {
      detail: object(
        { message: string(), status: oneOfValues(CODES, "The router's error code") },
        { request_id: string("The answer's `x-request-id`"), param: string("The parameter or field at fault"), retry_after: integer("Seconds to wait (also `Retry-After`)"), limit_bytes: integer() },
      ),
    },
    {},
    "ElevenLabs' error envelope, which its SDK hands to its error classes",
  ),
  ElevenLabsMissingKey: object({ error: constant("missing_api_key") }, {}, "ElevenLabs' answer to a request with no key at all"),
};

const ENVELOPE: Record<Surface, string> = { native: "NativeError", el: "ElevenLabsError", oai: "OpenAIError" };

/** The key checks of an authenticated operation, as each surface reports them. */
export const KEY_FAILURES: Record<number, string> = {
  401: "`missing_api_key` or `invalid_api_key`",
  403: "`tenant_disabled`",
};

/** The key checks of an operation that routes to a provider: the caller's preferences may exclude every provider of the model. */
export const ROUTED_KEY_FAILURES: Record<number, string> = {
  ...KEY_FAILURES,
  403: "`tenant_disabled`; `provider_not_allowed`: the provider preferences exclude every provider of the model",
};

/** A spent budget (docs/limits.md#budgets): 429 with `x-should-retry: false`, as retrying today will not pass. */
export const BUDGET_EXCEEDED = "`budget_exceeded`: the key's or the account's `usd_per_day` or `usd_per_month` is spent (`x-should-retry: false`: retrying before it renews will not pass)";

/** The tenant's and key's counted limits (docs/limits.md#concurrency-and-rate), as each surface names them: on every authenticated operation. */
const LIMITED: Record<Surface, string> = {
  native: "`rate_limited`: the account's or key's `requests_per_minute` is reached; `concurrency_limited`: its `max_sessions` are in flight (sessions and streamed answers); both with `Retry-After`",
  oai: "type `rate_limit_error`, code `rate_limited`: the account's or key's `requests_per_minute` is reached; code `concurrency_limited`: its `max_sessions` are in flight (sessions and streamed answers); both with `Retry-After` and `retry-after-ms`, which the OpenAI SDK waits before its retry",
  el: "`rate_limit_exceeded`: the account's or key's `requests_per_minute` is reached; `too_many_concurrent_requests`: its `max_sessions` are in flight (sessions and streamed answers); both with `Retry-After`",
};

const SHUTTING_DOWN = "`service_unavailable`: the server is shutting down; retry on another instance";

function failure(surface: Surface, status: number, description: string): ResponseObject {
  const schema = surface === "el" && status === 401 ? { oneOf: [ref("ElevenLabsError"), ref("ElevenLabsMissingKey")] } : ref(ENVELOPE[surface]);
  const refused = (status >= 400 && status < 500) || status === 501;
  const headers = { ...(refused ? REFUSAL_HEADERS : ANSWER_HEADERS), ...(status === 429 || status === 503 ? RETRY_AFTER : {}) };
  return { description, headers, content: json(schema) };
}

/**
 * An operation's failures in its surface's envelope, by status, each described by the codes it
 * carries and when. Every routed request may also fail 500 `internal_error`, and 503 while the
 * server shuts down (surfaces/request-gate.ts): both are added, and an authenticated one (a 401
 * listed) 429 past its account's or key's counted limits.
 */
export function failures(surface: Surface, statuses: Record<number, string>): Record<string, ResponseObject> {
  const limited: Record<number, string> = statuses[401] ? { 429: statuses[429] ? `${LIMITED[surface]}; ${statuses[429]}` : LIMITED[surface] } : {};
  const all: Record<number, string> = { ...statuses, ...limited, 500: "`internal_error`", 503: statuses[503] ? `${statuses[503]}; or ${SHUTTING_DOWN}` : SHUTTING_DOWN };
  return Object.fromEntries(Object.entries(all).map(([status, description]) => [status, failure(surface, Number(status), description)]));
}
