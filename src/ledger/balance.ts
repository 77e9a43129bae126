import { usdOfCredits } from "./amounts.ts";
import type { Ledger } from "./ledger.ts";
import { grantActive, parseTargets } from "./sources.ts";

/** `GET /account/balance`: what the tenant has, what is spendable, and each grant with credits left. */
export async function balanceView(ledger: Ledger, tenantId: string) {
  const { balance, grants, now } = await ledger.snapshot(tenantId);
  const paid = balance.paidCredits;
  const spendablePaid = Math.max(0, paid - balance.paidHeld);
  const promotion_grants = grants.map((g) => {
    const active = grantActive(g, now);
    return {
      name: g.name,
      remaining_credits: g.remainingCredits,
      remaining_usd: usdOfCredits(g.remainingCredits),
      expires_at: g.expiresAt?.toISOString() ?? null,
      eligible: active && g.remainingCredits - g.heldCredits > 0,
      targets: parseTargets(g.targets),
    };
  });
  const promotional = grants.filter((g) => grantActive(g, now)).reduce((n, g) => n + g.remainingCredits, 0);
  return {
    state: spendablePaid > 0 || promotion_grants.some((g) => g.eligible) ? "ok" : "exhausted",
    paid_credits: paid,
    spendable_paid_credits: spendablePaid,
    promotional_credits: promotional,
    paid_balance_usd: usdOfCredits(paid),
    updated_at: balance.updatedAt.toISOString(),
    promotion_grants,
  };
}
