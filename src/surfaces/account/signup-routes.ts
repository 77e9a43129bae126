import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { clientAddress } from "../client-address.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";

const body = async (request: Request): Promise<Record<string, unknown>> => {
  const value = await jsonBody(request, BODY_LIMITS.account);
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ApiError("invalid_request", "the body must be a JSON object");
  return value as Record<string, unknown>;
};

/** `POST /account/agent-signup` and `/account/agent-signup/verify`: no key needed. */
export function signupRoutes(ctx: AppContext) {
  return new Elysia()
    .post("/account/agent-signup", async ({ request, server }) => ctx.signup.request((await body(request)).email, clientAddress(ctx.config, request, server)), {
      parse: "none",
    })
    .post(
      "/account/agent-signup/verify",
      async ({ request }) => {
        const o = await body(request);
        return ctx.signup.verify(o.email, o.code);
      },
      { parse: "none" },
    );
}
