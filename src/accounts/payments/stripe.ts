import Stripe from "stripe";
import type { Checkout, CheckoutRequest, PaymentProvider } from "./types.ts";

export interface StripeOptions {
  secretKey: string;
  webhookSecret: string;
  /** Where the API is, for a proxy or a test double; the real API when unset. */
  apiUrl?: string;
  /** Where the payer returns after checkout. */
  returnUrl: string;
}

/** Stripe Checkout through the official SDK: one-time payments in USD. */
export class StripePayments implements PaymentProvider {
  readonly id = "stripe";
  readonly stripe: Stripe;

  constructor(private readonly options: StripeOptions) {
    const api = options.apiUrl ? new URL(options.apiUrl) : undefined;
    this.stripe = new Stripe(options.secretKey, {
      maxNetworkRetries: 2,
      ...(api ? { host: api.hostname, port: api.port || (api.protocol === "https:" ? 443 : 80), protocol: api.protocol.replace(":", "") as "http" | "https" } : {}),
    });
  }

  async createCheckout(req: CheckoutRequest): Promise<Checkout> {
    const session = await this.stripe.checkout.sessions.create(
      {
        mode: "payment",
        line_items: [{ quantity: 1, price_data: { currency: "usd", unit_amount: req.amountCents, product_data: { name: "voxroute credits" } } }],
        client_reference_id: req.tenantId,
        metadata: { top_up_id: req.topUpId },
        success_url: `${this.options.returnUrl}?top_up=${req.topUpId}&status=paid`,
        cancel_url: `${this.options.returnUrl}?top_up=${req.topUpId}&status=cancelled`,
        expires_at: Math.floor(Date.now() / 1000) + 24 * 3600,
      },
      { idempotencyKey: req.idempotencyKey },
    );
    if (!session.url) throw new Error("Stripe returned a checkout session without a url");
    return { checkoutId: session.id, url: session.url, expiresAt: new Date(session.expires_at * 1000) };
  }

  /** The verified event of a webhook delivery; rejects when the signature does not match. */
  verify(rawBody: string, signature: string | null): Promise<Stripe.Event> {
    // The async form: under Bun the SDK signs with WebCrypto, which has no synchronous API.
    return this.stripe.webhooks.constructEventAsync(rawBody, signature ?? "", this.options.webhookSecret);
  }
}
