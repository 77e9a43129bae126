import { Elysia } from "elysia";
import { authenticate, bearerToken } from "../../accounts/keys.ts";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";

/** `POST /account/top-up-link` (Bearer): a checkout link for paid credits; `Idempotency-Key` optional. */
export function topUpRoutes(ctx: AppContext) {
  return new Elysia({ detail: { tags: ["account"] } }).post(
    "/account/top-up-link",
    async ({ request }) => {
      const { tenantId } = await authenticate(ctx.database, bearerToken(request.headers.get("authorization")));
      const body = await jsonBody(request, BODY_LIMITS.account);
      if (typeof body !== "object" || body === null || Array.isArray(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
      return ctx.topUps.createLink(tenantId, (body as Record<string, unknown>).amount_usd, request.headers.get("idempotency-key"));
    },
    { parse: "none", detail: { summary: "Make a payment link for 5 to 1000 USD of credits" } },
  );
}
