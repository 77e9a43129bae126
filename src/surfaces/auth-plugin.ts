import { Elysia } from "elysia";
import { bearerToken } from "../accounts/keys.ts";
import type { AppContext } from "../context.ts";
import { ONE_REQUEST } from "../limits/counters.ts";

/** Where a surface reads a request's API key. */
export type KeyReader = (request: Request) => string | undefined;

/** The key of an `Authorization: Bearer` header (the native and `/oai` surfaces). */
export const bearerKey: KeyReader = (request) => bearerToken(request.headers.get("authorization"));

/**
 * A surface's authentication as an Elysia plugin: the routes after `.use(...)` get `principal`,
 * and a missing or unknown key (401) or a disabled tenant (403) is thrown before their handler,
 * to be answered in the path's envelope (app.ts, error-responses.ts). WebSocket routes do not use
 * it: surfaces/ws-admission.ts checks the same key once per handshake, and a refused key closes
 * the socket after the upgrade. The key's and its tenant's `requests_per_minute` are drawn on
 * here, once per request (429 `rate_limited` past them, docs/limits.md); a route that streams its
 * answer counts it as a session itself (`max_sessions`).
 */
export function authPlugin(ctx: AppContext, keyOf: KeyReader) {
  return new Elysia().resolve({ as: "scoped" }, async ({ request }) => {
    const principal = await ctx.keys.authenticate(keyOf(request));
    const counted = ctx.limits.admit(principal, ONE_REQUEST);
    if (counted) await counted; // nothing to count: no await
    return { principal };
  });
}
