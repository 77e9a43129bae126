import type { SqlQuery } from "../db/sql.ts";
import { CREDITS_PER_USD } from "../ledger/amounts.ts";
import { type Limits, readLimits } from "./types.ts";

// What a key (or a tenant) spent today and this month, from the activity records: each request
// counts on the UTC day and month it started (as /account/usage counts it), with the credits it
// was billed. The ledger's records are one for every instance, so the sums are the fleet's.

export interface Spend {
  /** Credits spent since 00:00 UTC today. */
  day: number;
  /** Credits spent since the first of this month, 00:00 UTC. */
  month: number;
}

/** Where today and this month began (UTC), and their numbers (days and months since the epoch). */
export function periodsOf(at: Date | number) {
  const d = new Date(at);
  const dayStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return { dayStart: new Date(dayStart), monthStart: new Date(monthStart), day: dayStart / 86_400_000, month: d.getUTCFullYear() * 12 + d.getUTCMonth() };
}

const SPEND = "SELECT key_id, sum(credits) AS month, sum(CASE WHEN started_at >= ? THEN credits ELSE 0 END) AS day FROM activity WHERE tenant_id = ? AND started_at >= ?";

/** A tenant's spend, or (with `keyId`) one key's. */
export async function spendOf(sql: SqlQuery, tenantId: string, keyId: string | undefined, now: Date): Promise<Spend> {
  const { dayStart, monthStart } = periodsOf(now);
  const text = keyId ? `${SPEND} AND key_id = ? GROUP BY key_id` : SPEND.replace("key_id, ", "");
  const [row] = await sql.query<{ day: unknown; month: unknown }>(text, keyId ? [dayStart, tenantId, monthStart, keyId] : [dayStart, tenantId, monthStart]);
  return { day: Number(row?.day ?? 0), month: Number(row?.month ?? 0) };
}

/** A key's limits as stored now, or (without `keyId`) its tenant's. */
export async function storedLimitsOf(sql: SqlQuery, tenantId: string, keyId: string | undefined): Promise<Limits> {
  const [row] = keyId
    ? await sql.query<{ limits: string | null }>("SELECT limits FROM api_keys WHERE id = ? AND tenant_id = ?", [keyId, tenantId])
    : await sql.query<{ limits: string | null }>("SELECT limits FROM tenants WHERE id = ?", [tenantId]);
  return readLimits(row?.limits);
}

/** A tenant's spend and each of its keys' that spent this month. */
export async function spendByKey(sql: SqlQuery, tenantId: string, now: Date): Promise<{ tenant: Spend; keys: Map<string, Spend> }> {
  const { dayStart, monthStart } = periodsOf(now);
  const rows = await sql.query<{ key_id: string | null; day: unknown; month: unknown }>(`${SPEND} GROUP BY key_id`, [dayStart, tenantId, monthStart]);
  const tenant = { day: 0, month: 0 };
  const keys = new Map<string, Spend>();
  for (const row of rows) {
    const spend = { day: Number(row.day ?? 0), month: Number(row.month ?? 0) };
    tenant.day += spend.day;
    tenant.month += spend.month;
    if (row.key_id) keys.set(row.key_id, spend);
  }
  return { tenant, keys };
}

/** A budget in USD as whole credits (a fraction of a credit is not spendable). */
export const creditsOfBudget = (usd: number) => Math.floor(usd * CREDITS_PER_USD + 1e-6);
