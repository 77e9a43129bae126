import { Elysia } from "elysia";
import { createOwnKey, listOwnKeys, revokeOwnKey } from "../../accounts/own-keys.ts";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { nativeAuth } from "../native/auth.ts";
import { BODY_LIMITS, textBody } from "../request-body.ts";
import { query } from "./query.ts";

/** POST takes no body, or an empty JSON object: nothing about a key is chosen by its caller. */
async function noBody(request: Request): Promise<void> {
  const text = (await textBody(request, BODY_LIMITS.account)).trim();
  if (text !== "" && text !== "{}") throw new ApiError("invalid_request", "this endpoint takes no body (or an empty JSON object)");
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
        await noBody(request);
        set.status = 201;
        return createOwnKey(ctx.database, principal.tenantId);
      },
      { parse: "none", detail: { summary: "Create an API key: the whole key is in this answer only" } },
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
