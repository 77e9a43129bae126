import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { EXPIRES_IN } from "../../realtime/client-secrets.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";
import { nativeAuth } from "./auth.ts";
import { isObject } from "../../util/is-object.ts";

function expiresIn(value: unknown): number {
  if (value === undefined) return EXPIRES_IN.default;
  if (typeof value !== "number" || !Number.isInteger(value) || value < EXPIRES_IN.min || value > EXPIRES_IN.max) {
    throw new ApiError("invalid_request", `expires_in must be a whole number of seconds from ${EXPIRES_IN.min} to ${EXPIRES_IN.max}`, { param: "expires_in" });
  }
  return value;
}

/** `POST /v1/realtime/client-secrets` (Bearer): a single-use secret that opens one of the tenant's profiles. */
export function realtimeClientSecretRoute(ctx: AppContext) {
  return new Elysia().use(nativeAuth(ctx)).post(
    "/v1/realtime/client-secrets",
    async ({ request, principal, set }) => {
      const body = await jsonBody(request, BODY_LIMITS.clientSecret);
      if (!isObject(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
      if (typeof body.profile_id !== "string" || !body.profile_id) throw new ApiError("invalid_request", "profile_id is required", { param: "profile_id" });
      const seconds = expiresIn(body.expires_in);
      const profile = await ctx.profiles.get(principal.tenantId, body.profile_id);
      set.status = 201;
      return ctx.clientSecrets.mint(principal, profile.id, seconds);
    },
    { parse: "none" },
  );
}
