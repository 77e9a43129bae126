import { currentRequestId } from "./request-context.ts";

// One error type and one table: every code maps to an HTTP status and a WebSocket close code here,
// never in scattered literals. Surfaces choose the envelope; the table is shared.

export const ERRORS = {
  invalid_request: { status: 400, close: 1008 },
  model_required: { status: 400, close: 1008 },
  voice_required: { status: 400, close: 1008 },
  missing_required_parameter: { status: 400, close: 1008 },
  invalid_output_format: { status: 400, close: 1008 },
  model_not_found: { status: 400, close: 1008 },
  no_matching_provider: { status: 400, close: 1008 },
  unsupported_stt_option: { status: 400, close: 1008 },
  conflicting_audio_format: { status: 400, close: 1008 },
  missing_api_key: { status: 401, close: 4401 },
  invalid_api_key: { status: 401, close: 4401 },
  /** A realtime client secret that is unknown, already used or expired (all alike). */
  invalid_client_secret: { status: 401, close: 4401 },
  insufficient_balance: { status: 402, close: 4402 },
  tenant_disabled: { status: 403, close: 4403 },
  provider_not_allowed: { status: 403, close: 4403 },
  /** A carrier's call webhook whose signature does not hold (docs/telephony.md): refused before any work. */
  invalid_signature: { status: 403, close: 4403 },
  not_found: { status: 404, close: 1008 },
  /** The resource is already in the state the request would move it out of (a voice being deleted). */
  stale_transition: { status: 409, close: 1008 },
  /** A `/v1/voices` cursor cut from a voice catalogue that has changed since: start again from the first page. */
  catalogue_changed: { status: 409, close: 1008 },
  tts_text_too_large: { status: 413, close: 1009 },
  payload_too_large: { status: 413, close: 1009 },
  validation: { status: 422, close: 1008 },
  model_not_priced: { status: 422, close: 1008 },
  indeterminate_audio_duration: { status: 422, close: 1008 },
  /**
   * A provider refused to make a voice of the recordings (its own 4xx, its message passed on). 422,
   * not 400: the request was well-formed, its audio could not be used; and not 5xx, since sending
   * the same again fails again. Its message advises a retry (other recordings) after checking the voice's status.
   */
  custom_voices_failed: { status: 422, close: 1008 },
  websocket_upgrade_required: { status: 426, close: 1008 },
  /** The tenant's or key's `requests_per_minute` is reached (docs/limits.md): `Retry-After` says when a request will pass. */
  rate_limited: { status: 429, close: 1013 },
  /** The tenant's or key's `max_sessions` are all in flight: `Retry-After` says when to try again. */
  concurrency_limited: { status: 429, close: 1013 },
  /** The key's `usd_per_day` or `usd_per_month` is spent: retrying today will not pass (`x-should-retry: false`); a session reaching it mid-way ends as one out of balance does. */
  budget_exceeded: { status: 429, close: 4402 },
  not_implemented: { status: 501, close: 1008 },
  upstream_error: { status: 502, close: 1011 },
  service_unavailable: { status: 503, close: 1001 },
  /** No provider's voice list could be had yet (`Retry-After` says when the catalogue tries again). */
  voice_catalogue_unavailable: { status: 503, close: 1013 },
  /** Every candidate is at capacity (the local recognizer's decoders): try again later (`retry_after` seconds). */
  provider_overloaded: { status: 503, close: 1013 },
  /** Every candidate's circuit is open (its provider kept failing, docs/routing.md#provider-health): try again after `retry_after` seconds. */
  provider_unavailable: { status: 503, close: 1013 },
  /** No provider serving this server can clone voices (none configured with cloning, or cloning turned off). */
  custom_voices_unavailable: { status: 503, close: 1013 },
  internal_error: { status: 500, close: 1011 },
  // Close-only codes of the /v1/tts channel.
  invalid_tts_frame: { status: 400, close: 1003 },
  tts_text_frame_too_large: { status: 400, close: 1009 },
  // Close-only code of the /v1/stt channel.
  invalid_stt_frame: { status: 400, close: 1003 },
  // Close-only code of the streaming channels: no client frame and nothing sent for the idle timeout.
  idle_timeout: { status: 408, close: 4408 },
  // Close-only codes of the realtime channels: the application cannot be reached, does not answer,
  // or closes its socket in the middle of an answer.
  application_unavailable: { status: 502, close: 1011 },
  application_timeout: { status: 504, close: 1011 },
  application_disconnected: { status: 502, close: 1011 },
  invalid_realtime_frame: { status: 400, close: 1003 },
  // Close-only code of the telephony media socket: a frame that is not the carrier's JSON, or no valid `start` in time.
  invalid_media_frame: { status: 400, close: 1008 },
  // Before an /el stream-input upgrade: too many sockets from one address wait for their init frame.
  too_many_concurrent_requests: { status: 429, close: 1013 },
} as const satisfies Record<string, { status: number; close: number }>;

export type ErrorCode = keyof typeof ERRORS;

/** Close codes that carry no code of the table above. */
export const CLOSE = {
  /** The work is done (`tts_complete`, `stt_complete`), or we end an upstream socket. */
  normal: 1000,
  /** The server is shutting down (`server_shutdown`). */
  goingAway: 1001,
  /** ElevenLabs' close on `/el` stream-input, where /v1/tts would say 1003 or 4408: an unreadable frame, its inactivity timeout. */
  policyViolation: 1008,
  /** Only ever received: the peer closed without a code, or the connection dropped. */
  noStatus: 1005,
  abnormal: 1006,
} as const;

/** nginx's "client closed request": the status of an HTTP answer nobody is left to read. */
export const CLIENT_GONE_STATUS = 499;

/**
 * A provider failure. `retryable` failures (refused, handshake error, upstream 5xx) let the
 * session move on to the next candidate while no audio has reached the client; the others
 * (a bad voice, a rejected option) are the caller's to fix. `param` names the request's field the
 * provider refused, when it can tell: the client is then answered 400, not 502.
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly param?: string,
  ) {
    super(message);
  }
}

/** A provider at capacity: the next candidate may be tried; a client left with none should try again later. */
export class ProviderOverloaded extends ProviderError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message, true);
  }
}

/** A candidate whose audio cannot continue a stream another began (tts-failover.ts): skipped for the next, no failure of the provider's. */
export class CannotContinue extends ProviderError {
  constructor(message: string) {
    super(message, true);
  }
}

export class ApiError extends Error {
  readonly status: number;
  readonly closeCode: number;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly extra: Record<string, unknown> = {},
    /** Only where the interface keeps one code for several statuses (account endpoints: 429 too many requests). */
    status?: number,
  ) {
    super(message ?? code.replaceAll("_", " "));
    this.status = status ?? ERRORS[code].status;
    this.closeCode = ERRORS[code].close;
  }
}

/** Native flat envelope: `{error: <code>}`, with a human message beside it and the request's id. */
export function nativeEnvelope(err: ApiError): Record<string, unknown> {
  const requestId = currentRequestId();
  return { error: err.code, message: err.message, ...err.extra, ...(requestId ? { request_id: requestId } : {}) };
}

/**
 * WebSocket close reason: the application range (4xxx) carries JSON `{error: <code>}`, the protocol
 * range carries the bare code (`invalid_tts_frame`, `upstream_error`). Bun truncates reasons to 123 bytes.
 */
export function closeReason(code: ErrorCode): string {
  return ERRORS[code].close >= 4000 ? JSON.stringify({ error: code }) : code;
}

/**
 * The close reason of a failure that ends a conversation: in the 4xxx range its code as JSON, as
 * every 4xxx close carries; otherwise the code and what failed (an application's host), within
 * the 123 bytes a reason may take.
 */
export function failureCloseReason(error: ApiError): string {
  if (error.closeCode >= 4000) return closeReason(error.code);
  return Buffer.from(`${error.code}: ${error.message}`)
    .subarray(0, 123)
    .toString()
    .replace(/\uFFFD$/, "");
}

/**
 * A session's failure as its client sees it: an ApiError as it is, a provider's refusal of one of
 * the request's fields 400 `invalid_request` naming it, a provider at capacity
 * `provider_overloaded`, anything else `upstream_error`.
 */
export function sessionFailure(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof ProviderError && err.param) return new ApiError("invalid_request", err.message, { param: err.param });
  if (err instanceof ProviderOverloaded) return new ApiError("provider_overloaded", err.message, { retry_after: err.retryAfterSeconds });
  return new ApiError("upstream_error", (err as Error).message);
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError("internal_error", "internal error");
}
