import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { clientAddress } from "../client-address.ts";

const body = (value: unknown): Record<string, unknown> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ApiError("invalid_request", "the body must be a JSON object");
  return value as Record<string, unknown>;
};

/** `POST /account/agent-signup` and `/account/agent-signup/verify`: no key needed. */
export function signupRoutes(ctx: AppContext) {
  return new Elysia({ detail: { tags: ["account"] } })
    .post(
      "/account/agent-signup",
      ({ body: b, request, server }) => ctx.signup.request(body(b).email, clientAddress(ctx.config, request, server)),
      { detail: { summary: "Send a six-digit code to an e-mail address (new or existing account)" } },
    )
    .post(
      "/account/agent-signup/verify",
      ({ body: b }) => {
        const o = body(b);
        return ctx.signup.verify(o.email, o.code);
      },
      { detail: { summary: "Exchange the code for an API key (shown only here)" } },
    );
}
