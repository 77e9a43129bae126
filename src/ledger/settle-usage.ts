import { add, rational } from "../catalogue/price.ts";
import type { Binding } from "../catalogue/types.ts";
import { startSpan } from "../tracing/spans.ts";
import type { Outcome } from "./activity.ts";
import type { ActivityRow, SettleInput, SettlePart } from "./batch-requests.ts";
import { type CachedUnits, costWithCached, rateOf, usageUnit } from "./cost.ts";
import type { Ledger } from "./ledger.ts";
import { cachedOf } from "./parts.ts";

// A request's settle as the ledger is asked for it: how the request ended made into its activity
// record, written with retries, in a `ledger.settle` span. What the request does around it (its
// hold, its checkpoint) is metered-request.ts's.

/** How a request ended, as it is settled. */
export interface RequestEnd {
  binding: Binding;
  status: "completed" | "failed";
  outcome: Outcome;
  units: number;
  startedAt: Date;
  /** Time to first output (audio or transcript), or the whole duration when there was none. */
  latencyMs: number;
  attempts: { provider: string; reason: string }[];
  /** TTS: characters of `units` played from the TTS cache, billed at the model's price times `factor` (a decimal string). */
  cached?: CachedUnits;
}

/** One binding's share of a request served in parts (a failover mid-session). */
type ServedPart = SettlePart & { binding: Binding };

/** The record's fields that come from the request itself, not from how it ended. */
type Requester = Pick<SettleInput, "id" | "tenantId" | "keyId" | "surface" | "voice">;

const SETTLE_TRIES = 5;

/** The activity record of a request that ended as `end`, served in `parts` when more than one binding served it. */
export function usageRecord(request: Requester, end: RequestEnd, parts: ServedPart[] | undefined): SettleInput {
  const units = parts ? parts.reduce((n, p) => n + p.units, 0) : end.units;
  return {
    id: request.id,
    tenantId: request.tenantId,
    keyId: request.keyId,
    surface: request.surface,
    binding: end.binding,
    status: end.status,
    outcome: end.outcome,
    usageUnit: usageUnit(end.binding),
    units,
    cost: parts ? parts.reduce((c, p) => add(c, p.cost), rational(0n)) : costWithCached(rateOf(end.binding), end.units, end.cached),
    startedAt: end.startedAt,
    finishedAt: new Date(),
    latencyMs: end.latencyMs,
    attempts: end.attempts,
    voice: request.voice,
    ...(parts ? { parts } : {}),
    ...(end.cached?.units ? { cachedUnits: parts ? cachedOf(parts) : Math.min(units, end.cached.units) } : {}),
  };
}

/**
 * Writes `usage`; a write that fails is tried again after a growing pause, up to SETTLE_TRIES
 * tries, and the last one's error is thrown.
 */
export async function writeUsage(ledger: Ledger, usage: SettleInput): Promise<ActivityRow> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ledger.settle(usage);
    } catch (err) {
      if (attempt >= SETTLE_TRIES) throw err;
      await Bun.sleep(50 * 2 ** attempt);
    }
  }
}

/** `settle` in a `ledger.settle` span (straight through with tracing off): what it billed, or that the usage was not recorded. */
export async function inSettleSpan(end: RequestEnd, settle: () => Promise<{ credits: number }>): Promise<{ credits: number }> {
  const span = startSpan("ledger.settle");
  if (!span) return settle();
  try {
    const row = await settle();
    span.set({ "voxroute.credits": row.credits, "voxroute.units": end.units, "voxroute.outcome": end.outcome });
    return row;
  } catch (err) {
    span.fail("usage_not_recorded");
    throw err;
  } finally {
    span.end();
  }
}
