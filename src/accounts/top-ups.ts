import { and, eq } from "drizzle-orm";
import type { Database } from "../db/open.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Ledger } from "../ledger/ledger.ts";
import { newId } from "./keys.ts";
import type { PaymentProvider } from "./payments/types.ts";

// Top-up links and their completion. A link is made once per idempotency key (the same key and
// amount give the same link; the same key with another amount is refused); a payment credits
// the account once, however often its completion is delivered.

export const CREDITS_PER_CENT = 10_000;

function amountCents(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) throw new ApiError("invalid_request", "amount_usd must be a number", { param: "amount_usd" });
  if (value < 5 || value > 1000) throw new ApiError("invalid_request", "amount_usd must be from 5 to 1000", { param: "amount_usd" });
  const cents = Math.round(value * 100);
  if (Math.abs(cents - value * 100) > 1e-6) throw new ApiError("invalid_request", "amount_usd has at most two decimals", { param: "amount_usd" });
  return cents;
}

function idempotencyKey(value: string | null): string | undefined {
  if (value === null) return undefined;
  if (value.length < 1 || value.length > 255) throw new ApiError("invalid_request", "Idempotency-Key must be 1 to 255 characters", { param: "Idempotency-Key" });
  return value;
}

export class TopUps {
  constructor(
    private readonly database: Database,
    private readonly ledger: Ledger,
    private readonly provider: PaymentProvider | undefined,
    private readonly log: Logger,
  ) {}

  get enabled(): boolean {
    return this.provider !== undefined;
  }

  async createLink(tenantId: string, amountUsd: unknown, idempotencyHeader: string | null) {
    const cents = amountCents(amountUsd);
    const key = idempotencyKey(idempotencyHeader);
    if (!this.provider) throw new ApiError("service_unavailable", "top-ups are not enabled on this server");
    const t = this.database.schema.topUps;
    const view = (row: { url: string; amountCents: number; expiresAt: Date }) => ({ url: row.url, amount_usd: row.amountCents / 100, expires_at: row.expiresAt.toISOString() });
    const existing = async () => {
      if (!key) return undefined;
      const [row] = await this.database.db
        .select()
        .from(t)
        .where(and(eq(t.tenantId, tenantId), eq(t.idempotencyKey, key)));
      if (row && row.amountCents !== cents) {
        throw new ApiError("invalid_request", "this Idempotency-Key was used with a different amount_usd", { param: "Idempotency-Key" });
      }
      return row;
    };

    const seen = await existing();
    if (seen) return view(seen);
    const topUpId = newId();
    const checkout = await this.provider.createCheckout({ topUpId, tenantId, amountCents: cents, idempotencyKey: `topup:${tenantId}:${key ?? topUpId}:${cents}` }).catch((err) => {
      this.log.error({ err, provider: this.provider!.id }, "creating a checkout failed");
      throw new ApiError("upstream_error", "the payment provider could not make a checkout link");
    });
    const row = {
      id: topUpId,
      tenantId,
      idempotencyKey: key ?? topUpId,
      amountCents: cents,
      provider: this.provider.id,
      checkoutId: checkout.checkoutId,
      url: checkout.url,
      expiresAt: checkout.expiresAt,
      createdAt: new Date(),
    };
    const inserted = await this.database.transaction((tx) => tx.insert(t).values(row).onConflictDoNothing().returning({ id: t.id }));
    // A concurrent request with the same key won the race: answer with its link.
    return inserted.length ? view(row) : view((await existing())!);
  }

  /** Credits a paid checkout once; false when it was credited before or is unknown. */
  async complete(provider: "stripe" | "sandbox", checkoutId: string): Promise<boolean> {
    const t = this.database.schema.topUps;
    const [row] = await this.database.db
      .select()
      .from(t)
      .where(and(eq(t.checkoutId, checkoutId), eq(t.provider, provider)));
    if (!row) {
      this.log.warn({ provider, checkoutId }, "payment for an unknown checkout ignored");
      return false;
    }
    const { applied } = await this.ledger.credit(row.tenantId, {
      credits: row.amountCents * CREDITS_PER_CENT,
      type: "top_up",
      description: `top-up of ${(row.amountCents / 100).toFixed(2)} USD`,
      externalId: `${provider}:${checkoutId}`,
    });
    if (applied) {
      await this.database.transaction((tx) => tx.update(t).set({ completedAt: new Date() }).where(eq(t.id, row.id)));
      this.log.info({ tenantId: row.tenantId, provider, amountCents: row.amountCents }, "top-up credited");
    }
    return applied;
  }

  /** A sandbox checkout page's facts, or undefined. */
  async sandboxCheckout(checkoutId: string) {
    const t = this.database.schema.topUps;
    const [row] = await this.database.db
      .select()
      .from(t)
      .where(and(eq(t.checkoutId, checkoutId), eq(t.provider, "sandbox")));
    return row;
  }
}
