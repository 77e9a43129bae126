import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { nativeAuth } from "../native/auth.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";

/** `POST /account/top-up-link` (Bearer): a checkout link for paid credits; `Idempotency-Key` optional. */
export function topUpRoutes(ctx: AppContext) {
  return new Elysia().use(nativeAuth(ctx)).post(
    "/account/top-up-link",
    async ({ request, principal: { tenantId } }) => {
      const body = await jsonBody(request, BODY_LIMITS.account);
      if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
      return ctx.topUps.createLink(tenantId, (body as Record<string, unknown>).amount_usd, request.headers.get("idempotency-key"));
    },
    { parse: "none" },
  );
}
