import type { DocumentPart, PathItem } from "./document-types.ts";
import { failures } from "./error-envelopes.ts";
import { answer, json, pathParam, query } from "./operation.ts";
import { constant, object } from "./schema.ts";
import { NO_KEY } from "./security.ts";

// Where payments come back (surfaces/payments/payment-routes.ts): pages for the payer's browser,
// and Stripe's webhook or the sandbox checkout, whichever this deployment is configured with.

const page = (description: string) => answer(description, { "text/html": { schema: { type: "string" } } });
const CHECKOUT_ID = pathParam("id", "The sandbox checkout (`sbx_…`)");

const topUpReturn: PathItem = {
  get: {
    operationId: "topUpReturn",
    summary: "Where the payer's browser returns from checkout",
    tags: ["payments"],
    security: NO_KEY,
    parameters: [query("status", "`paid` after a payment; anything else reads as cancelled")],
    responses: { 200: page("A page for the payer"), ...failures("native", {}) },
  },
};

const stripeWebhook: PathItem = {
  post: {
    operationId: "stripeWebhook",
    summary: "Stripe's webhook (signature verified)",
    description: "Each paid checkout credits the account once, however often it is delivered.",
    tags: ["payments"],
    security: NO_KEY,
    parameters: [{ name: "Stripe-Signature", in: "header", description: "Stripe's signature of the raw body", required: true, schema: { type: "string" } }],
    requestBody: { required: true, content: { "application/json": { schema: { type: "object", description: "A Stripe event" } } } },
    responses: {
      200: answer("Received", json(object({ received: constant(true) }))),
      ...failures("native", { 400: "`invalid_request`: the signature does not verify", 413: "`payload_too_large`: over 1 MiB" }),
    },
  },
};

const sandbox: Record<string, PathItem> = {
  "/sandbox/checkout/{id}": {
    get: {
      operationId: "sandboxCheckout",
      summary: "The sandbox checkout page (no money moves)",
      tags: ["payments"],
      security: NO_KEY,
      parameters: [CHECKOUT_ID],
      responses: { 200: page("The checkout, or that it was paid or has expired"), ...failures("native", { 404: "`not_found`: no such checkout" }) },
    },
  },
  "/sandbox/checkout/{id}/complete": {
    post: {
      operationId: "sandboxCheckoutComplete",
      summary: "Pay a sandbox checkout: its credits are added once",
      tags: ["payments"],
      security: NO_KEY,
      parameters: [CHECKOUT_ID],
      responses: { 200: page("Paid, or expired"), ...failures("native", { 404: "`not_found`: no such checkout" }) },
    },
  },
};

/** The payment paths of a deployment with `provider` (the id of `ctx.payments`), or with neither. */
export function paymentPaths(provider: string | undefined): DocumentPart {
  return {
    paths: {
      "/account/top-up-return": topUpReturn,
      ...(provider === "stripe" ? { "/webhooks/stripe": stripeWebhook } : {}),
      ...(provider === "sandbox" ? sandbox : {}),
    },
  };
}
