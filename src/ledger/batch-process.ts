import { add, rational } from "../catalogue/price.ts";
import { asDate, asNumber, type SqlTx } from "../db/sql.ts";
import { BALANCE_COLUMNS, type BalanceRow, balanceOf, GRANT_COLUMNS, grantOf } from "./balance-rows.ts";
import type { ActivityRow, RecoverInput, ReserveInput, SettleInput } from "./batch-requests.ts";
import { recoveredSettle } from "./checkpoint.ts";
import { partsRecord, spendHeld } from "./parts.ts";
import { allocate, eligibleGrants, mergeAllocations, PAID, planDebits, total, type Allocation, type GrantRow } from "./sources.ts";
import { recordId } from "../util/record-id.ts";

// One batch of the ledger's holds, settles and recoveries, in one transaction (batch.ts queues
// them). It locks the balance rows of every tenant it touches, in tenant-id order (so batches of
// other instances cannot deadlock with it), reads their grants and which of its requests are
// already recorded, applies its requests one by one in memory, in the order they arrived, and
// writes the outcome (absolute balances and grants, multi-row inserts) together with the COMMIT:
// two round trips however large. Pure over its transaction, so that it runs where the database
// is: on the event loop for PostgreSQL, in the SQLite worker for a SQLite file.

/** A request's look-ahead hold takes at most this fraction (1/n) of the credits left free. */
const AHEAD_SHARE = 8;
/** The most requests in one batch. */
export const MAX_BATCH = 64;

/** A ledger request as a batch takes it: plain data (its bindings as `BillingTarget`s), so it can cross to a worker. */
export type BatchJob = { kind: "reserve"; input: ReserveInput } | { kind: "settle"; input: SettleInput } | { kind: "recover"; input: RecoverInput };

export interface BatchContext {
  dialect: "sqlite" | "postgres";
  /** The batch's clock: hold expiries, grant expiry and debits' times. */
  now: Date;
  holdTtlMs: number;
}

const lists = new Map<string, string>();
/** `item` n times, comma-separated: a batch's statements repeat a few shapes, each built once (n is at most a batch's size, or grows with a batch's entries). */
function repeated(n: number, item: string): string {
  const key = `${n}${item}`;
  let list = lists.get(key);
  if (list === undefined) {
    list = Array.from({ length: n }, () => item).join(", ");
    if (n <= MAX_BATCH) lists.set(key, list);
  }
  return list;
}
const marks = (n: number) => repeated(n, "?");
const rows = (n: number, width: number) => repeated(n, `(${marks(width)})`);

interface TenantState {
  bal: BalanceRow;
  grants: GrantRow[];
  dirty: boolean;
}

/** What each job of the batch answers, in order: a reserve its `Allocation[]`, a settle its `ActivityRow`, a recovery its `Recovery`. */
export async function processBatch(tx: SqlTx, batch: BatchJob[], { dialect, now, holdTtlMs }: BatchContext): Promise<unknown[]> {
  const tenantOf = (job: BatchJob) => job.input.tenantId;
  const tenants = [...new Set(batch.map(tenantOf))].sort();
  const recordIds = batch.flatMap((j) => (j.kind === "settle" ? [j.input.id] : j.kind === "recover" ? [j.input.holdId] : []));
  const holdIds = batch.map((j) => (j.kind === "settle" ? j.input.id : j.input.holdId));
  const recoverIds = batch.flatMap((j) => (j.kind === "recover" ? [j.input.holdId] : []));
  const forUpdate = dialect === "postgres" ? " FOR UPDATE" : "";

  // Round trip 1: balance rows exist and are locked (in order), grants read, earlier settles seen,
  // and what each request holds read from its hold row: the database, never the caller's copy,
  // says what is held (a hold already recovered holds nothing any more). Read under the locks,
  // a lapsed hold's expiry and checkpoint decide its recovery once, whichever process asks.
  const [, locked, grantRows, done, holdRows, lapsedRows] = await Promise.all([
    tx.query(
      `INSERT INTO balances (tenant_id, paid_credits, paid_held, carry_num, carry_den, updated_at) VALUES ${repeated(tenants.length, "(?, 0, 0, 0, 1, ?)")} ON CONFLICT (tenant_id) DO NOTHING`,
      tenants.flatMap((t) => [t, now]),
    ),
    tx.query(`SELECT tenant_id, ${BALANCE_COLUMNS} FROM balances WHERE tenant_id IN (${marks(tenants.length)}) ORDER BY tenant_id${forUpdate}`, tenants),
    tx.query(`SELECT tenant_id, ${GRANT_COLUMNS} FROM grants WHERE tenant_id IN (${marks(tenants.length)}) AND remaining_credits > 0`, tenants),
    recordIds.length ? tx.query<{ id: string; credits: unknown; status: string }>(`SELECT id, credits, status FROM activity WHERE id IN (${marks(recordIds.length)})`, recordIds) : [],
    tx.query<{ id: string; allocations: string }>(`SELECT id, allocations FROM holds WHERE id IN (${marks(holdIds.length)})`, holdIds),
    recoverIds.length
      ? tx.query<{ id: string; expires_at: unknown; checkpoint: string | null }>(`SELECT id, expires_at, checkpoint FROM holds WHERE id IN (${marks(recoverIds.length)})`, recoverIds)
      : [],
  ]);
  const lapsed = new Map(lapsedRows.map((r) => [r.id, { expiresAt: asDate(r.expires_at), checkpoint: r.checkpoint }]));
  const heldBy = new Map(holdRows.map((r) => [r.id, JSON.parse(r.allocations) as Allocation[]]));
  /** Holds with a row: one made and released within the batch (a hold written behind, taken into its settle's batch) has none to delete. */
  const stored = new Set(heldBy.keys());

  const state = new Map<string, TenantState>();
  for (const r of locked) state.set(String(r.tenant_id), { bal: balanceOf(r), grants: [], dirty: false });
  for (const r of grantRows) state.get(String(r.tenant_id))!.grants.push(grantOf(r));
  const settled = new Map(done.map((r) => [r.id, { id: r.id, credits: asNumber(r.credits), status: r.status }]));
  const dirtyGrants = new Set<GrantRow>();
  const holdUpserts = new Map<string, { tenantId: string; allocations: Allocation[]; checkpoint: string }>();
  const holdDeletes: string[] = [];
  const activity: unknown[][] = [];
  const entries: unknown[][] = [];

  /** Gives back what the request holds, and drops its hold row. */
  const release = (s: TenantState, id: string) => {
    const held = heldBy.get(id);
    if (!held) return;
    heldBy.delete(id);
    holdUpserts.delete(id);
    for (const h of held) {
      if (h.source === PAID) s.bal.paidHeld -= h.credits;
      else {
        const g = touch(s, h.source, dirtyGrants);
        if (g) g.heldCredits -= h.credits;
      }
    }
    s.dirty = true;
    if (stored.has(id)) holdDeletes.push(id);
  };

  const settle = (s: TenantState, input: SettleInput): ActivityRow => {
    const seen = settled.get(input.id);
    if (seen) {
      release(s, input.id); // a hold taken again after the record was written (a late reserve)
      return seen;
    }
    // Part by part (one part unless a failover split the request), each at its binding's rate
    // and paid from the sources that binding may spend: carry + cost = debit + carry', with the
    // debit whole and 0 <= carry' < 1.
    const held = (heldBy.get(input.id) ?? []).map((a) => ({ ...a })); // what is left of it to spend
    const partCredits: number[] = [];
    for (const part of input.parts ?? [input]) {
      const exact = add(rational(BigInt(s.bal.carryNum), BigInt(s.bal.carryDen)), part.cost);
      const debit = Number(exact.num / exact.den);
      const carry = rational(exact.num % exact.den, exact.den);
      for (const d of planDebits(debit, held, s.grants, s.bal, part.binding, now)) {
        if (d.source === PAID) s.bal.paidCredits -= d.credits;
        else touch(s, d.source, dirtyGrants)!.remainingCredits -= d.credits;
        spendHeld(held, d);
        entries.push([recordId(), input.tenantId, input.id, d.source, -d.credits, input.finishedAt]);
      }
      s.bal.carryNum = Number(carry.num);
      s.bal.carryDen = Number(carry.den);
      partCredits.push(debit);
    }
    release(s, input.id);
    s.dirty = true;
    const debit = partCredits.reduce((a, b) => a + b, 0);
    activity.push([
      input.id,
      input.tenantId,
      input.keyId ?? null,
      input.surface,
      input.startedAt,
      input.finishedAt,
      Math.max(0, Math.round(input.latencyMs)),
      input.binding.provider.id,
      input.binding.canonical,
      input.binding.capability,
      input.status,
      input.outcome,
      input.usageUnit,
      input.units,
      debit,
      JSON.stringify(input.attempts),
      input.voice ?? null,
      input.parts ? partsRecord(input.parts, partCredits) : null,
      input.cachedUnits ?? 0,
    ]);
    const row = { id: input.id, credits: debit, status: input.status, ...(input.parts ? { partCredits } : {}) };
    settled.set(input.id, row);
    return row;
  };

  const results = batch.map((job) => {
    const s = state.get(tenantOf(job))!;
    if (job.kind === "reserve") {
      const { binding, minimum, ahead, holdId } = job.input;
      const held = heldBy.get(holdId) ?? [];
      const grants = eligibleGrants(s.grants, binding, now);
      const sources = [...grants.map((g) => ({ id: g.id, available: g.remainingCredits - g.heldCredits })), { id: PAID, available: s.bal.paidCredits - s.bal.paidHeld }];
      const available = sources.reduce((n, x) => n + Math.max(0, x.available), 0);
      if (available < minimum || available === 0) return [];
      const added = allocate(sources, minimum + Math.min(ahead, Math.floor((available - minimum) / AHEAD_SHARE)));
      for (const a of added) {
        if (a.source === PAID) s.bal.paidHeld += a.credits;
        else touch(s, a.source, dirtyGrants)!.heldCredits += a.credits;
      }
      s.dirty = true;
      const merged = mergeAllocations(held, added);
      heldBy.set(holdId, merged);
      holdUpserts.set(holdId, { tenantId: job.input.tenantId, allocations: merged, checkpoint: JSON.stringify(job.input.checkpoint) });
      return added;
    }
    if (job.kind === "recover") {
      const { holdId, tenantId, lapsedBefore } = job.input;
      const hold = lapsed.get(holdId);
      if (!hold || !heldBy.has(holdId) || hold.expiresAt.getTime() >= lapsedBefore.getTime()) return "skipped";
      if (settled.has(holdId) || !hold.checkpoint) {
        release(s, holdId);
        return "released";
      }
      settle(s, recoveredSettle(holdId, tenantId, hold.checkpoint));
      return "recovered";
    }
    return settle(s, job.input);
  });

  // Round trip 2, with the COMMIT: the outcome.
  for (const [tenantId, s] of state) {
    if (!s.dirty) continue;
    tx.later("UPDATE balances SET paid_credits = ?, paid_held = ?, carry_num = ?, carry_den = ?, updated_at = ? WHERE tenant_id = ?", [
      s.bal.paidCredits,
      s.bal.paidHeld,
      s.bal.carryNum,
      s.bal.carryDen,
      now,
      tenantId,
    ]);
  }
  for (const g of dirtyGrants) tx.later("UPDATE grants SET remaining_credits = ?, held_credits = ? WHERE id = ?", [g.remainingCredits, g.heldCredits, g.id]);
  if (holdUpserts.size) {
    const expiresAt = new Date(now.getTime() + holdTtlMs);
    tx.later(
      // The checkpoint is written with a new hold only: later ones come from the hold keeper.
      `INSERT INTO holds (id, tenant_id, allocations, total_credits, created_at, expires_at, checkpoint) VALUES ${rows(holdUpserts.size, 7)} ` +
        "ON CONFLICT (id) DO UPDATE SET allocations = excluded.allocations, total_credits = excluded.total_credits, expires_at = excluded.expires_at",
      // In id order, as every writer of hold rows locks them.
      [...holdUpserts].sort(([a], [b]) => (a < b ? -1 : 1)).flatMap(([id, h]) => [id, h.tenantId, JSON.stringify(h.allocations), total(h.allocations), now, expiresAt, h.checkpoint]),
    );
  }
  if (holdDeletes.length) tx.later(`DELETE FROM holds WHERE id IN (${marks(holdDeletes.length)})`, holdDeletes.sort());
  if (activity.length) {
    tx.later(
      "INSERT INTO activity (id, tenant_id, key_id, surface, started_at, finished_at, latency_ms, provider, model, capability, status, outcome, usage_unit, usage_amount, credits, attempts, voice, parts, cached_units) " +
        `VALUES ${rows(activity.length, 19)}`,
      activity.flat(),
    );
  }
  if (entries.length) {
    tx.later(`INSERT INTO ledger_entries (id, tenant_id, activity_id, transaction_id, source, credits, created_at) VALUES ${repeated(entries.length, "(?, ?, ?, NULL, ?, ?, ?)")}`, entries.flat());
  }
  return results;
}

/**
 * The tenant's grant, marked for writing. A grant with nothing left is not loaded: a hold on it
 * (if any) has nothing to release, and debits are only ever planned from loaded grants.
 */
function touch(s: TenantState, grantId: string, dirty: Set<GrantRow>): GrantRow | undefined {
  const g = s.grants.find((x) => x.id === grantId);
  if (g) dirty.add(g);
  return g;
}
