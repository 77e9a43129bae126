import { noteRequest } from "../request-context.ts";
import type { Principal } from "../accounts/keys.ts";
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { balanceView } from "../ledger/balance.ts";

/**
 * What a compatibility path the service does not implement checks before it answers 501, in the
 * interface's order: the key (401, 403 for a disabled tenant: the surface's auth plugin, before),
 * then whether the account can pay for anything at all (402).
 */
export async function notImplemented(ctx: AppContext, principal: Principal, path: string): Promise<never> {
  if ((await balanceView(ctx.meter.ledger, principal.tenantId)).state === "exhausted") throw new ApiError("insufficient_balance", "the balance cannot pay for any request");
  throw new ApiError("not_implemented", `${path} is not implemented by this service`);
}

/**
 * An error's own headers (`x-should-retry` is set for every answer in one place: retry-verdict.ts).
 * Every surface's envelope is made through here, so the request being answered notes its code
 * (its log line, the refusals metric).
 */
export function errorHeaders(err: ApiError): Record<string, string> {
  noteRequest({ error: err.code });
  // A spent budget is a 429 that retrying today cannot pass, whatever the status rule says of 429s.
  if (err.code === "budget_exceeded") return { "x-should-retry": "false" };
  const headers: Record<string, string> = {};
  if (typeof err.extra.retry_after === "number") headers["retry-after"] = String(err.extra.retry_after);
  // Milliseconds, which the OpenAI SDK reads before Retry-After's whole seconds.
  if (typeof err.extra.retry_after_ms === "number") headers["retry-after-ms"] = String(err.extra.retry_after_ms);
  return headers;
}
