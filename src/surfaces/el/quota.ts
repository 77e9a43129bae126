import { and, eq, gte, sql } from "drizzle-orm";
import type { Binding } from "../../catalogue/types.ts";
import type { AppContext } from "../../context.ts";
import { rateOf } from "../../ledger/cost.ts";
import { eligibleGrants } from "../../ledger/sources.ts";

// The account's balance as ElevenLabs counts quota: characters. `/el/v1/user` and
// `/el/v1/user/subscription` show it (user-routes.ts); docs/compat-el.md states the rule.

export interface CharacterQuota {
  /** TTS characters billed this calendar month (UTC). */
  used: number;
  /** What the spendable credits buy at the tenant's cheapest TTS model, in characters. */
  remaining: number;
  /** Unix seconds: the first of next month, 00:00 UTC, when `used` starts again from 0. */
  resetsAt: number;
}

/** Whole characters `credits` pay for at a rate (its per-request price once, then per character). */
function charactersFor(credits: number, binding: Binding): number {
  const { perUnit, perRequest } = rateOf(binding);
  const left = BigInt(credits) * perRequest.den - perRequest.num; // (credits − request price) · den
  if (left <= 0n || perUnit.num === 0n) return 0;
  return Number((left * perUnit.den) / (perRequest.den * perUnit.num));
}

/**
 * Remaining characters: for every priced TTS model of the deployment, what the spendable paid
 * credits plus the promotional grants that may pay for that model buy; the largest (the cheapest
 * model for this account) is the answer.
 */
async function remainingCharacters(ctx: AppContext, tenantId: string): Promise<number> {
  const { balance, grants, now } = await ctx.meter.ledger.snapshot(tenantId);
  const paid = Math.max(0, balance.paidCredits - balance.paidHeld);
  let best = 0;
  for (const b of ctx.catalogue.bindings) {
    if (b.capability !== "tts" || !b.price) continue;
    const promotional = eligibleGrants(grants, b, now).reduce((n, g) => n + Math.max(0, g.remainingCredits - g.heldCredits), 0);
    best = Math.max(best, charactersFor(paid + promotional, b));
  }
  return best;
}

async function charactersSince(ctx: AppContext, tenantId: string, start: Date): Promise<number> {
  const a = ctx.database.schema.activity;
  const [row] = await ctx.database.db
    .select({ characters: sql<number>`coalesce(sum(${a.usageAmount}), 0)` })
    .from(a)
    .where(and(eq(a.tenantId, tenantId), eq(a.usageUnit, "characters"), gte(a.startedAt, start)));
  return Number(row?.characters ?? 0);
}

export async function characterQuota(ctx: AppContext, tenantId: string, now = new Date()): Promise<CharacterQuota> {
  const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const [used, remaining] = await Promise.all([charactersSince(ctx, tenantId, monthStart), remainingCharacters(ctx, tenantId)]);
  return { used, remaining, resetsAt: nextMonth / 1000 };
}
