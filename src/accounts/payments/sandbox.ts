import type { Checkout, CheckoutRequest, PaymentProvider } from "./types.ts";

/**
 * A local checkout for the embedded default and demos: the link opens a page on this server whose
 * button completes the payment. Moves no money; enabled only by SANDBOX_PAYMENTS=true.
 */
export class SandboxPayments implements PaymentProvider {
  readonly id = "sandbox";

  constructor(private readonly publicUrl: () => string) {}

  async createCheckout(req: CheckoutRequest): Promise<Checkout> {
    const checkoutId = `sbx_${req.topUpId}`;
    return { checkoutId, url: `${this.publicUrl()}/sandbox/checkout/${checkoutId}`, expiresAt: new Date(Date.now() + 24 * 3600_000) };
  }
}
