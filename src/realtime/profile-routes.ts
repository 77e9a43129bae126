import { Elysia } from "elysia";
import { authenticate, bearerToken } from "../accounts/keys.ts";
import type { AppContext } from "../context.ts";
import { BODY_LIMITS, jsonBody } from "../surfaces/request-body.ts";
import { parsePipeline } from "./profiles.ts";

/** `POST /v1/realtime/profiles` and `GET /v1/realtime/profiles/{profile_id}` (Bearer). */
export function realtimeProfileRoutes(ctx: AppContext) {
  const principal = (request: Request) => authenticate(ctx.database, bearerToken(request.headers.get("authorization")));
  return new Elysia({ detail: { tags: ["realtime"] } })
    .post(
      "/v1/realtime/profiles",
      async ({ request, set }) => {
        const { tenantId } = await principal(request);
        const body = await jsonBody(request, BODY_LIMITS.profile);
        const b = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
        set.status = 201;
        return ctx.profiles.create(tenantId, b.name, parsePipeline(ctx.catalogue, b.pipeline));
      },
      { parse: "none", detail: { summary: "Create a realtime profile" } },
    )
    .get("/v1/realtime/profiles/:profile_id", async ({ request, params }) => ctx.profiles.get((await principal(request)).tenantId, params.profile_id), { detail: { summary: "A realtime profile" } });
}
