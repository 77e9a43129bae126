import { and, desc, eq, gte, lt, lte, or, sql, type SQL } from "drizzle-orm";
import type { Database } from "../db/open.ts";
import { usdOfCredits } from "./amounts.ts";

/** `interrupted`: the server died mid-request; settled later from the request's last checkpoint. */
export const ACTIVITY_STATUSES = ["completed", "failed", "interrupted"] as const;
export type ActivityStatus = (typeof ACTIVITY_STATUSES)[number];

/**
 * How a request ended, the one vocabulary of logs, metrics and activity (docs/architecture.md,
 * "How a session ends"). A request recovered after its server died ended `shutdown`.
 */
export const OUTCOMES = ["completed", "cut_off", "client_left", "failed", "shutdown"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** A record written before outcomes were stored (or by an older server on the same database): read from its status. */
const outcomeOfStatus = (status: string): Outcome => (status === "completed" ? "completed" : status === "interrupted" ? "shutdown" : "failed");

export interface ActivityQuery {
  tenantId: string;
  start: Date;
  end: Date;
  provider?: string;
  model?: string;
  capability?: "tts" | "stt";
  status?: ActivityStatus;
  limit: number;
  after?: { t: number; id: string };
}

/** A page of activity, newest first (by start time, then id), with the key of its last item. */
export async function activityPage({ db, schema }: Database, q: ActivityQuery) {
  const a = schema.activity;
  const filters: (SQL | undefined)[] = [
    eq(a.tenantId, q.tenantId),
    gte(a.startedAt, q.start),
    lte(a.startedAt, q.end),
    q.provider ? eq(a.provider, q.provider) : undefined,
    q.model ? eq(a.model, q.model) : undefined,
    q.capability ? eq(a.capability, q.capability) : undefined,
    q.status ? eq(a.status, q.status) : undefined,
    q.after ? or(lt(a.startedAt, new Date(q.after.t)), and(eq(a.startedAt, new Date(q.after.t)), lt(a.id, q.after.id))) : undefined,
  ];
  const rows = await db
    .select()
    .from(a)
    .where(and(...filters))
    .orderBy(desc(a.startedAt), desc(a.id))
    .limit(q.limit + 1);
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    items: page.map((r) => ({
      id: r.id,
      started_at: r.startedAt.toISOString(),
      finished_at: r.finishedAt.toISOString(),
      latency_ms: r.latencyMs,
      provider: r.provider,
      model: r.model,
      capability: r.capability,
      status: r.status,
      outcome: r.outcome ?? outcomeOfStatus(r.status),
      usage_unit: r.usageUnit,
      usage_amount: r.usageAmount,
      credits: r.credits,
      cost_usd: usdOfCredits(r.credits),
      attempts: JSON.parse(r.attempts),
      ...(r.voice ? { voice: r.voice } : {}),
      ...(r.parts ? { parts: JSON.parse(r.parts) } : {}),
      ...(r.cachedUnits ? { cached_units: r.cachedUnits } : {}),
    })),
    next: rows.length > q.limit && last ? { t: last.startedAt.getTime(), id: last.id } : undefined,
  };
}

/** Daily totals per API key (UTC days) from `start` (inclusive) to `end` (exclusive). */
export async function dailyUsage(database: Database, tenantId: string, start: Date, end: Date) {
  const { db, schema, dialect } = database;
  const a = schema.activity;
  const k = schema.apiKeys;
  // Day number since the epoch: the one dialect-specific expression here.
  const dayOf = dialect === "postgres" ? sql<number>`floor(extract(epoch from ${a.startedAt}) / 86400)::bigint` : sql<number>`(${a.startedAt} / 86400000)`;
  const rows = await db
    .select({
      day: dayOf,
      keyId: a.keyId,
      prefix: k.prefix,
      requests: sql<number>`count(*)`,
      // Every request that did not complete: failed, or interrupted by a crash of the server.
      failed: sql<number>`sum(case when ${a.status} <> 'completed' then 1 else 0 end)`,
      characters: sql<number>`sum(case when ${a.usageUnit} = 'characters' then ${a.usageAmount} else 0 end)`,
      seconds: sql<number>`sum(case when ${a.usageUnit} = 'seconds' then ${a.usageAmount} else 0 end)`,
      cached: sql<number>`sum(${a.cachedUnits})`,
      credits: sql<number>`sum(${a.credits})`,
    })
    .from(a)
    .leftJoin(k, eq(k.id, a.keyId))
    .where(and(eq(a.tenantId, tenantId), gte(a.startedAt, start), lt(a.startedAt, end)))
    .groupBy(dayOf, a.keyId, k.prefix)
    .orderBy(dayOf, a.keyId);
  return rows.map((r) => {
    const credits = Number(r.credits);
    return {
      date: new Date(Number(r.day) * 86_400_000).toISOString().slice(0, 10),
      api_key: r.keyId ? { id: r.keyId, prefix: r.prefix } : null,
      requests: Number(r.requests),
      failed: Number(r.failed),
      characters: Number(r.characters),
      seconds: Number(r.seconds),
      cached_characters: Number(r.cached),
      credits,
      cost_usd: usdOfCredits(credits),
    };
  });
}

/** Organization-level credit events, newest first; payment references are never shown. */
export async function transactionsPage({ db, schema }: Database, tenantId: string, limit: number, after?: { t: number; id: string }) {
  const t = schema.creditTransactions;
  const rows = await db
    .select({ id: t.id, type: t.type, credits: t.credits, description: t.description, createdAt: t.createdAt })
    .from(t)
    .where(and(eq(t.tenantId, tenantId), after ? or(lt(t.createdAt, new Date(after.t)), and(eq(t.createdAt, new Date(after.t)), lt(t.id, after.id))) : undefined))
    .orderBy(desc(t.createdAt), desc(t.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    items: page.map((r) => ({ id: r.id, created_at: r.createdAt.toISOString(), type: r.type, credits: r.credits, amount_usd: usdOfCredits(r.credits), description: r.description })),
    next: rows.length > limit && last ? { t: last.createdAt.getTime(), id: last.id } : undefined,
  };
}
