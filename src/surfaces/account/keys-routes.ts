import { Elysia } from "elysia";
import { createOwnKey, listOwnKeys, revokeOwnKey } from "../../accounts/own-keys.ts";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { limitProblem, storedLimit } from "../../limits/limit-values.ts";
import type { Limits } from "../../limits/types.ts";
import { isObject } from "../../util/is-object.ts";
import { nativeAuth } from "../native/auth.ts";
import { BODY_LIMITS, textBody } from "../request-body.ts";
import { query } from "./query.ts";

/** What a tenant may limit its own key by (docs/limits.md#setting-limits). */
const KEY_LIMITS = ["usd_per_day", "usd_per_month", "max_sessions"] as const;

/** POST takes no body, an empty JSON object, or the key's own limits: nothing else about a key is chosen by its caller. */
async function keyLimits(request: Request): Promise<Limits> {
  const text = (await textBody(request, BODY_LIMITS.account)).trim();
  if (text === "") return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError("invalid_request", "the body must be JSON");
  }
  if (!isObject(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
  const limits: Limits = {};
  for (const [name, value] of Object.entries(body)) {
    const known = KEY_LIMITS.find((n) => n === name);
    if (!known) throw new ApiError("invalid_request", `${name} is not a key's setting (${KEY_LIMITS.join(", ")})`, { param: name });
    if (value === null) continue;
    const problem = limitProblem(known, value);
    if (problem) throw new ApiError("invalid_request", problem, { param: name });
    limits[known] = storedLimit(value as number);
  }
  return limits;
}

/** `/account/keys` (Bearer): the account's API keys, listed by prefix, created (shown once) and revoked. */
export function keysRoutes(ctx: AppContext) {
  return new Elysia({ detail: { tags: ["account"] } })
    .use(nativeAuth(ctx))
    .get(
      "/account/keys",
      async ({ request, principal }) => {
        query(request, []);
        return { items: await listOwnKeys(ctx.database, principal.tenantId) };
      },
      { detail: { summary: "The account's API keys by prefix, newest first, with when each was created, revoked and last used" } },
    )
    .post(
      "/account/keys",
      async ({ request, principal, set }) => {
        const limits = await keyLimits(request);
        set.status = 201;
        return createOwnKey(ctx.database, principal.tenantId, limits);
      },
      { parse: "none", detail: { summary: "Create an API key, with its own budget and session limit if given: the whole key is in this answer only" } },
    )
    .delete(
      "/account/keys/:key",
      async ({ params, principal, set }) => {
        const name = params.key;
        if (name.length > 200) throw new ApiError("invalid_request", "key must be a key's id or prefix", { param: "key" });
        await revokeOwnKey(ctx.database, principal.tenantId, name);
        ctx.keys.forgetTenant(principal.tenantId);
        set.status = 204;
        return null;
      },
      { parse: "none", detail: { summary: "Revoke a key by its id or prefix; its open sessions end within seconds" } },
    );
}
