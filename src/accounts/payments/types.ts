/** A payment provider: makes hosted checkout links; completions come back by its own channel. */
export interface PaymentProvider {
  readonly id: "stripe" | "sandbox";
  createCheckout(req: CheckoutRequest): Promise<Checkout>;
}

export interface CheckoutRequest {
  topUpId: string;
  tenantId: string;
  amountCents: number;
  /** Passed to the provider so a retried request makes no second checkout. */
  idempotencyKey: string;
}

export interface Checkout {
  checkoutId: string;
  url: string;
  expiresAt: Date;
}
