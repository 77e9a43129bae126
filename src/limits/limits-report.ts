import type { Database } from "../db/open.ts";
import { usdOfCredits } from "../ledger/amounts.ts";
import type { LiveUsage } from "./live-usage.ts";
import { periodsOf, type Spend, spendByKey } from "./spend.ts";
import { type LimitsReport, readLimits } from "./types.ts";

// A tenant's limits and each live key's, with what is used of them now: the spend from the ledger
// (today and this month, UTC) and, when the live counters run, sessions in flight and requests
// in the last minute. `GET /account/limits` answers it; `limits show` prints it.

const spent = (spend: Spend | undefined) => ({ spent_today_usd: usdOfCredits(spend?.day ?? 0), spent_this_month_usd: usdOfCredits(spend?.month ?? 0) });

export async function limitsReport(database: Database, tenantId: string, live?: LiveUsage, now = new Date()): Promise<LimitsReport> {
  const { sql } = database;
  const [[tenant], keys, spend] = await Promise.all([
    sql.query<{ limits: string | null }>("SELECT limits FROM tenants WHERE id = ?", [tenantId]),
    sql.query<{ id: string; prefix: string; limits: string | null }>("SELECT id, prefix, limits FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id DESC", [
      tenantId,
    ]),
    spendByKey(sql, tenantId, now),
  ]);
  const [tenantLive, keysLive] = live ? await Promise.all([live.tenant(tenantId), Promise.all(keys.map((k) => live.key(k.id)))]) : [undefined, []];
  const { dayStart } = periodsOf(now);
  return {
    day: dayStart.toISOString().slice(0, 10),
    month: dayStart.toISOString().slice(0, 7),
    tenant: { limits: readLimits(tenant?.limits), ...spent(spend.tenant), ...tenantLive },
    keys: keys.map((k, i) => ({ id: k.id, prefix: k.prefix, limits: readLimits(k.limits), ...spent(spend.keys.get(k.id)), ...keysLive[i] })),
  };
}
