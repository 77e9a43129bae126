import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { createdWith, parsePipeline } from "../../realtime/profiles.ts";
import { cursor, integer, pageBody, query } from "../account/query.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";
import { nativeAuth } from "./auth.ts";

/** `POST` and `GET /v1/realtime/profiles`, and `GET /v1/realtime/profiles/{profile_id}` (Bearer). */
export function realtimeProfileRoutes(ctx: AppContext) {
  return new Elysia()
    .use(nativeAuth(ctx))
    .post(
      "/v1/realtime/profiles",
      async ({ request, principal: { tenantId, keyId }, set }) => {
        const body = await jsonBody(request, BODY_LIMITS.profile);
        const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
        set.status = 201;
        return ctx.profiles.create(tenantId, b.name, createdWith(parsePipeline(ctx.catalogue, b.pipeline, ctx.config.realtime.allowPrivateUpstreams), keyId));
      },
      { parse: "none" },
    )
    .get("/v1/realtime/profiles", async ({ request, principal: { tenantId } }) => {
      const q = query(request, ["limit", "cursor"]);
      return pageBody(await ctx.profiles.list(tenantId, integer(q, "limit", 1, 100, 50), cursor(q)));
    })
    .get("/v1/realtime/profiles/:profile_id", ({ principal, params }) => ctx.profiles.get(principal.tenantId, params.profile_id));
}
