import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { readLinkBody } from "../../realtime/phone-links.ts";
import { pageBody } from "../account/query.ts";
import { nativeAuth } from "../native/auth.ts";
import { publicBase } from "../public-base.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";
import { WEBHOOK_PATH } from "./call-webhook-route.ts";

/**
 * `POST` and `GET /v1/realtime/profiles/{profile_id}/phone-links`, `DELETE /v1/realtime/phone-links/{id}`
 * (Bearer): a carrier's number pointed at a profile (docs/telephony.md).
 */
export function phoneLinkRoutes(ctx: AppContext) {
  return new Elysia()
    .use(nativeAuth(ctx))
    .post(
      "/v1/realtime/profiles/:profile_id/phone-links",
      async ({ request, params, principal, set }) => {
        const profile = await ctx.profiles.get(principal.tenantId, params.profile_id);
        const { carrier, credential } = readLinkBody(await jsonBody(request, BODY_LIMITS.telephony));
        const { link, token } = await ctx.phoneLinks.create(principal, profile.id, carrier, credential);
        set.status = 201;
        return { ...link, webhook_url: `${publicBase(ctx, request)}${WEBHOOK_PATH}/${token}` };
      },
      { parse: "none" },
    )
    .get("/v1/realtime/profiles/:profile_id/phone-links", async ({ params, principal }) => {
      const profile = await ctx.profiles.get(principal.tenantId, params.profile_id);
      return pageBody({ items: await ctx.phoneLinks.list(principal.tenantId, profile.id) });
    })
    .delete("/v1/realtime/phone-links/:id", async ({ params, principal }) => ({ ...(await ctx.phoneLinks.revoke(principal.tenantId, params.id)), deleted: true }), { parse: "none" });
}
