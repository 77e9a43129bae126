import { Elysia } from "elysia";
import { StripePayments } from "../../accounts/payments/stripe.ts";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { nativeError } from "../error-responses.ts";
import { BODY_LIMITS, textBody } from "../request-body.ts";

const COMPLETING = new Set(["checkout.session.completed", "checkout.session.async_payment_succeeded"]);

const page = (title: string, body: string) =>
  new Response(`<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body style="font-family:sans-serif;max-width:30em;margin:4em auto">${body}</body></html>`, {
    headers: { "content-type": "text/html; charset=utf-8" },
  });

/**
 * Where payments come back: Stripe's signed webhook, or the sandbox checkout page. Each payment
 * credits the account once, however often it is delivered.
 */
export function paymentRoutes(ctx: AppContext) {
  const payments = ctx.payments;
  const app = new Elysia().get("/account/top-up-return", ({ query }) =>
    query.status === "paid"
      ? page("Payment received", "<h1>Thank you</h1><p>Your payment was received; the credits appear on your balance as soon as the payment provider confirms it.</p>")
      : page("Payment cancelled", "<h1>Payment cancelled</h1><p>Nothing was charged.</p>"),
  );

  if (payments instanceof StripePayments) {
    app.post(
      "/webhooks/stripe",
      async ({ request }) => {
        const body = await textBody(request, BODY_LIMITS.webhook);
        let event: Awaited<ReturnType<StripePayments["verify"]>>;
        try {
          event = await payments.verify(body, request.headers.get("stripe-signature"));
        } catch {
          return nativeError(new ApiError("invalid_request", "the webhook signature does not verify"));
        }
        if (COMPLETING.has(event.type)) {
          const session = event.data.object as { id: string; payment_status?: string };
          if (session.payment_status === "paid") await ctx.topUps.complete("stripe", session.id);
        }
        return { received: true };
      },
      { parse: "none" },
    );
  }

  if (payments?.id === "sandbox") {
    app
      .get("/sandbox/checkout/:id", async ({ params }) => {
        const row = await ctx.topUps.sandboxCheckout(params.id);
        if (!row) return nativeError(new ApiError("not_found", "no such checkout"));
        const amount = (row.amountCents / 100).toFixed(2);
        if (row.completedAt) return page("Paid", `<h1>Paid</h1><p>${amount} USD of credits were added.</p>`);
        if (row.expiresAt.getTime() < Date.now()) return page("Expired", `<h1>This checkout has expired</h1>`);
        return page(
          "Sandbox checkout",
          `<h1>Sandbox checkout</h1><p>This is a test payment: no money moves.</p><p><strong>${amount} USD</strong> of voxroute credits.</p>
           <form method="post" action="/sandbox/checkout/${params.id}/complete"><button type="submit">Pay ${amount} USD</button></form>`,
        );
      })
      .post(
        "/sandbox/checkout/:id/complete",
        async ({ params }) => {
          const row = await ctx.topUps.sandboxCheckout(params.id);
          if (!row) return nativeError(new ApiError("not_found", "no such checkout"));
          if (row.expiresAt.getTime() < Date.now() && !row.completedAt) return page("Expired", `<h1>This checkout has expired</h1>`);
          await ctx.topUps.complete("sandbox", params.id);
          return page("Paid", `<h1>Paid</h1><p>${(row.amountCents / 100).toFixed(2)} USD of credits were added.</p>`);
        },
        { parse: "none" },
      );
  }
  return app;
}
