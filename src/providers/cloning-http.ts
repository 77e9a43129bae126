import { ApiError } from "../errors.ts";
import type { WireJson } from "./wire-json.ts";
import { retryableStatus, upstreamErrorCode, type HttpProviderOptions } from "./upstream-http.ts";

// HTTP for the voice cloning APIs (VoiceCloning). Each call is one short exchange whose whole
// answer, an error's body included, is read within one bound; its failures are ApiErrors. A
// provider's refusal of the recordings or the request is the client's to fix and carries the
// provider's own words (`custom_voices_failed`); anything else is `upstream_error`, told by code only.

export interface CloningOptions extends HttpProviderOptions {
  /** Longest wait for a clone to be answered (upload and the provider's processing); default a minute, or the connect timeout if longer. */
  cloneTimeoutMs?: number;
}

export interface UpstreamAnswer {
  status: number;
  ok: boolean;
  text: string;
  /** The body as JSON; undefined when it is not JSON. */
  json: WireJson | undefined;
}

/** Bounds: a clone waits for the provider's processing; a lookup or deletion is connect plus one silence. */
export const cloneTimeout = (o: CloningOptions) => o.cloneTimeoutMs ?? Math.max(o.connectTimeoutMs, 60_000);
export const lookupTimeout = (o: CloningOptions) => o.connectTimeoutMs + o.idleTimeoutMs;

/** The provider's answer, whatever its status; only no answer in time (or none at all) throws. */
export async function cloningExchange(provider: string, url: string, init: RequestInit, timeoutMs: number): Promise<UpstreamAnswer> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(url, { ...init, signal });
    const text = await res.text();
    return { status: res.status, ok: res.ok, text, json: parsed(text) };
  } catch (err) {
    if (signal.aborted) throw new ApiError("upstream_error", `${provider} did not answer within ${timeoutMs} ms`);
    throw new ApiError("upstream_error", `${provider} could not be reached: ${(err as Error).message}`);
  }
}

/**
 * A failed answer as the VoiceCloning contract names it. A 4xx is the recordings' or the request's
 * fault, except 401/403 (our key), 404 (no such endpoint: our base URL), 408 and 429 (the
 * provider's load): those are the provider's failure to serve us, like a 5xx.
 */
export function cloningFailure(provider: string, answer: UpstreamAnswer, apiKey: string | undefined): ApiError {
  const { status } = answer;
  if (status >= 400 && status < 500 && status !== 404 && !retryableStatus(status)) {
    return new ApiError("custom_voices_failed", `${provider} refused the voice: ${providerMessage(answer, apiKey)}`);
  }
  return upstreamFailure(provider, answer);
}

/** A failed lookup or deletion: whatever its status, the provider failed us (`upstream_error`, its error code only). */
export function upstreamFailure(provider: string, answer: UpstreamAnswer): ApiError {
  const code = upstreamErrorCode(answer.text);
  return new ApiError("upstream_error", `${provider} answered ${answer.status}${code ? ` (${code})` : ""}`);
}

/** An answer that is not what the provider documents. */
export const unexpectedAnswer = (provider: string, what: string) => new ApiError("upstream_error", `${provider} answered ${what}`);

/** A successful answer's JSON object; anything else is `upstream_error`. */
export function answerJson(provider: string, answer: UpstreamAnswer): WireJson {
  if (typeof answer.json !== "object" || answer.json === null) throw unexpectedAnswer(provider, "something that is not JSON");
  return answer.json;
}

const MESSAGE_CHARS = 300;

/**
 * What the provider said, from the places ElevenLabs (`detail.message`, FastAPI's `detail[].msg`)
 * and Cartesia (`message`, `title`, `error`) put it; its status when it said nothing readable. Our
 * key is cut out should the message echo it.
 */
function providerMessage(answer: UpstreamAnswer, apiKey: string | undefined): string {
  const body = answer.json;
  const detail = body?.detail;
  const validation = Array.isArray(detail) ? detail.map((d: WireJson) => [d?.loc?.slice?.(1).join("."), d?.msg].filter(Boolean).join(": ")).join("; ") : undefined;
  const candidates = [detail?.message, typeof detail === "string" ? detail : undefined, validation, body?.message, body?.title, body?.error?.message, body?.error];
  const found = candidates.find((c): c is string => typeof c === "string" && c.trim() !== "");
  const message = (found ?? `status ${answer.status}`).slice(0, MESSAGE_CHARS);
  return apiKey ? message.replaceAll(apiKey, "[key]") : message;
}

function parsed(text: string): WireJson | undefined {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
