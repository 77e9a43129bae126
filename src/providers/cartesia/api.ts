import type { WireJson } from "../wire-json.ts";
import { ProviderError } from "../../errors.ts";
import { retryableStatus, safeErrorCode, type HttpProviderOptions } from "../upstream-http.ts";

/** The API version this adapter was written against (the one SDK 4.2 sends). */
export const CARTESIA_API_VERSION = "2026-08-14";

/** `Cartesia-Version` and, when a key is configured, `Authorization: Bearer`. */
export function cartesiaHeaders(options: HttpProviderOptions, extra: Record<string, string> = {}): Record<string, string> {
  return { ...extra, "cartesia-version": CARTESIA_API_VERSION, ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) };
}

/** The realtime base: `https://…` becomes `wss://…` (and `http://` `ws://`). */
export function cartesiaSocketBase(options: HttpProviderOptions): string {
  return options.baseUrl.replace(/^http/, "ws");
}

/**
 * A WebSocket `error` message (`{type:"error", status_code, error_code, message, title}`, or the
 * older `{error:"…"}`) as a ProviderError: retryable as an HTTP answer of its status would be
 * (401/403/408/429/5xx); without a status, retryable, since nothing says the request was at fault.
 */
export function cartesiaSocketError(ev: WireJson): ProviderError {
  const status = typeof ev.status_code === "number" ? ev.status_code : undefined;
  // Only its code goes on: free text may echo the request (the key among it).
  const code = safeErrorCode(ev.error_code) ?? safeErrorCode(ev.title);
  return new ProviderError(`cartesia answered an error${status ? ` ${status}` : ""}${code ? ` (${code})` : ""}`, status === undefined || retryableStatus(status));
}
