import { add, rational, type Rational } from "../catalogue/price.ts";
import type { Binding } from "../catalogue/types.ts";
import type { Database } from "../db/open.ts";
import { asDate, asDateOrNull, asNumber, type SqlQuery, type SqlTx } from "../db/sql.ts";
import { allocate, eligibleGrants, grantActive, grantCovers, mergeAllocations, PAID, parseTargets, total, type Allocation, type GrantRow, type GrantTarget } from "./sources.ts";

// The credit ledger. Every change to money happens in one transaction that first locks the
// tenant's balance row (an UPDATE of it), so concurrent requests of one tenant, in one process or
// several, see each other's holds and debits: no double spend. Different tenants never wait on
// each other. Hot paths are prepared plain SQL (db/sql.ts): a metered request costs two short
// transactions.

export interface SettleInput {
  /** The request id: the activity record's id and its hold's id. Settling twice is a no-op. */
  id: string;
  tenantId: string;
  keyId?: string;
  surface: string;
  binding: Binding;
  /** What the request holds, per source, as its reserves returned them. */
  held: Allocation[];
  status: "completed" | "failed";
  usageUnit: "characters" | "seconds";
  units: number;
  /** Exact credits the usage costs. */
  cost: Rational;
  startedAt: Date;
  finishedAt: Date;
  latencyMs: number;
  attempts: { provider: string; reason: string }[];
}

export interface ActivityRow {
  id: string;
  credits: number;
  status: string;
}

export interface CreditInput {
  credits: number;
  type: "grant" | "top_up" | "adjustment" | "welcome";
  description: string;
  /** Makes the event happen once: a second call with the same id changes nothing. */
  externalId?: string;
  grant?: { name: string; expiresAt: Date | null; targets: GrantTarget[] };
}

interface BalanceRow {
  paidCredits: number;
  paidHeld: number;
  carryNum: number;
  carryDen: number;
  updatedAt: Date;
}

const newId = () => crypto.randomUUID();

/** A request's look-ahead hold takes at most this fraction (1/n) of the credits left free. */
const AHEAD_SHARE = 8;

class AlreadySettled extends Error {}

const balanceOf = (r: Record<string, unknown>): BalanceRow => ({
  paidCredits: asNumber(r.paid_credits),
  paidHeld: asNumber(r.paid_held),
  carryNum: asNumber(r.carry_num),
  carryDen: asNumber(r.carry_den),
  updatedAt: asDate(r.updated_at),
});

const grantOf = (r: Record<string, unknown>): GrantRow => ({
  id: String(r.id),
  name: String(r.name),
  remainingCredits: asNumber(r.remaining_credits),
  heldCredits: asNumber(r.held_credits),
  targets: String(r.targets),
  expiresAt: asDateOrNull(r.expires_at),
  createdAt: asDate(r.created_at),
});

const BALANCE_COLUMNS = "paid_credits, paid_held, carry_num, carry_den, updated_at";
const GRANTS_OF = "SELECT id, name, remaining_credits, held_credits, targets, expires_at, created_at FROM grants WHERE tenant_id = ? AND remaining_credits > 0";

export class Ledger {
  constructor(
    private readonly database: Database,
    readonly holdTtlMs = 10 * 60_000,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Locks (and if need be creates) the tenant's balance row for the rest of the transaction. */
  private async lockBalance(tx: SqlTx, tenantId: string): Promise<BalanceRow> {
    const now = this.now();
    const lock = `UPDATE balances SET updated_at = ? WHERE tenant_id = ? RETURNING ${BALANCE_COLUMNS}`;
    let [row] = await tx.query(lock, [now, tenantId]);
    if (!row) {
      await tx.query("INSERT INTO balances (tenant_id, paid_credits, paid_held, carry_num, carry_den, updated_at) VALUES (?, 0, 0, 0, 1, ?) ON CONFLICT (tenant_id) DO NOTHING", [tenantId, now]);
      [row] = await tx.query(lock, [now, tenantId]);
    }
    return balanceOf(row);
  }

  private async grantsOf(tx: SqlQuery, tenantId: string): Promise<GrantRow[]> {
    return (await tx.query(GRANTS_OF, [tenantId])).map(grantOf);
  }

  /** Credits a request on `binding` could spend now (read-only: advisory, holds decide). */
  async spendable(tenantId: string, binding: Binding): Promise<number> {
    const { sql } = this.database;
    const [bal] = await sql.query(`SELECT ${BALANCE_COLUMNS} FROM balances WHERE tenant_id = ?`, [tenantId]);
    const grants = eligibleGrants(await this.grantsOf(sql, tenantId), binding, this.now());
    const fromGrants = grants.reduce((n, g) => n + Math.max(0, g.remainingCredits - g.heldCredits), 0);
    const b = bal ? balanceOf(bal) : undefined;
    return fromGrants + Math.max(0, (b?.paidCredits ?? 0) - (b?.paidHeld ?? 0));
  }

  /**
   * Adds to the request's hold: `minimum` credits (or nothing, when fewer are free) plus up to
   * `ahead` more for use still to come. The look-ahead takes at most 1/AHEAD_SHARE of what else is
   * free, so one request never starves the tenant's other requests on a small balance.
   * `held` is what the request holds already; returns what this call added.
   */
  reserve(holdId: string, tenantId: string, binding: Binding, minimum: number, ahead: number, held: Allocation[] = []): Promise<Allocation[]> {
    return this.database.sql.transaction(async (tx) => {
      const [bal, all] = await Promise.all([this.lockBalance(tx, tenantId), this.grantsOf(tx, tenantId)]);
      const grants = eligibleGrants(all, binding, this.now());
      const sources = [
        ...grants.map((g) => ({ id: g.id, available: g.remainingCredits - g.heldCredits })),
        { id: PAID, available: bal.paidCredits - bal.paidHeld },
      ];
      const available = sources.reduce((n, x) => n + Math.max(0, x.available), 0);
      if (available < minimum || available === 0) return [];
      const extra = Math.min(ahead, Math.floor((available - minimum) / AHEAD_SHARE));
      const added = allocate(sources, minimum + extra);
      this.adjustHeld(tx, tenantId, added, +1);
      const merged = mergeAllocations(held, added);
      tx.later(
        "INSERT INTO holds (id, tenant_id, allocations, total_credits, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?) " +
          "ON CONFLICT (id) DO UPDATE SET allocations = excluded.allocations, total_credits = excluded.total_credits, expires_at = excluded.expires_at",
        [holdId, tenantId, JSON.stringify(merged), total(merged), this.now(), new Date(this.now().getTime() + this.holdTtlMs)],
      );
      return added;
    });
  }

  /** Keeps a long-running request's hold from being swept. */
  async refresh(holdId: string): Promise<void> {
    await this.database.sql.transaction((tx) => tx.query("UPDATE holds SET expires_at = ? WHERE id = ?", [new Date(this.now().getTime() + this.holdTtlMs), holdId]));
  }

  private adjustHeld(tx: SqlTx, tenantId: string, allocations: Allocation[], sign: 1 | -1): void {
    for (const a of allocations) {
      if (a.source === PAID) tx.later("UPDATE balances SET paid_held = paid_held + ? WHERE tenant_id = ?", [sign * a.credits, tenantId]);
      else tx.later("UPDATE grants SET held_credits = held_credits + ? WHERE id = ?", [sign * a.credits, a.source]);
    }
  }

  /**
   * Turns a request's usage into debits and its one activity record, releasing its hold, all in
   * one transaction. The exact sub-credit remainder is carried to the tenant's next request.
   */
  async settle(input: SettleInput): Promise<ActivityRow> {
    try {
      return await this.database.sql.transaction((tx) => this.settleIn(tx, input));
    } catch (err) {
      if (!(err instanceof AlreadySettled)) throw err;
      const [row] = await this.database.sql.query<{ id: string; credits: unknown; status: string }>("SELECT id, credits, status FROM activity WHERE id = ?", [input.id]);
      return { id: row.id, credits: asNumber(row.credits), status: row.status };
    }
  }

  private async settleIn(tx: SqlTx, input: SettleInput): Promise<ActivityRow> {
    // One round trip for the lock, the idempotency check and the grants; one for all the writes.
    const [bal, done, all] = await Promise.all([
      this.lockBalance(tx, input.tenantId),
      tx.query("SELECT id FROM activity WHERE id = ?", [input.id]),
      this.grantsOf(tx, input.tenantId),
    ]);
    if (done.length) throw new AlreadySettled();
    // carry + cost = debit + carry', with debit whole and 0 <= carry' < 1
    const exact = add(rational(BigInt(bal.carryNum), BigInt(bal.carryDen)), input.cost);
    const debit = Number(exact.num / exact.den);
    const carry = rational(exact.num % exact.den, exact.den);

    const paidHeld = input.held.filter((a) => a.source === PAID).reduce((n, a) => n + a.credits, 0);
    const debits = this.planDebits(debit, input.held, all, bal, input.binding);

    tx.later(
      "INSERT INTO activity (id, tenant_id, key_id, surface, started_at, finished_at, latency_ms, provider, model, capability, status, usage_unit, usage_amount, credits, attempts) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      [
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
        input.usageUnit,
        input.units,
        debit,
        JSON.stringify(input.attempts),
      ],
    );
    const paidDebit = debits.filter((d) => d.source === PAID).reduce((n, d) => n + d.credits, 0);
    tx.later("UPDATE balances SET paid_held = paid_held - ?, paid_credits = paid_credits - ?, carry_num = ?, carry_den = ? WHERE tenant_id = ?", [
      paidHeld,
      paidDebit,
      Number(carry.num),
      Number(carry.den),
      input.tenantId,
    ]);
    tx.later("DELETE FROM holds WHERE id = ?", [input.id]);
    const grantIds = new Set([...input.held, ...debits].map((a) => a.source).filter((s) => s !== PAID));
    for (const id of grantIds) {
      const heldOf = input.held.find((a) => a.source === id)?.credits ?? 0;
      const debitOf = debits.find((d) => d.source === id)?.credits ?? 0;
      tx.later("UPDATE grants SET held_credits = held_credits - ?, remaining_credits = remaining_credits - ? WHERE id = ?", [heldOf, debitOf, id]);
    }
    for (const d of debits) {
      tx.later("INSERT INTO ledger_entries (id, tenant_id, activity_id, transaction_id, source, credits, created_at) VALUES (?, ?, ?, NULL, ?, ?, ?)", [
        newId(),
        input.tenantId,
        input.id,
        d.source,
        -d.credits,
        input.finishedAt,
      ]);
    }
    return { id: input.id, credits: debit, status: input.status };
  }

  /**
   * Which sources pay a debit: first what the request held, in the order it was reserved; then
   * what nobody holds of its eligible sources; and whatever is still owed from paid credits, which
   * may then dip below zero by less than what the holds did not cover (sub-credit carry at most,
   * when every unit was reserved before use).
   */
  private planDebits(debit: number, held: Allocation[], grants: GrantRow[], bal: BalanceRow, binding: Binding): Allocation[] {
    // After a fallback, a held grant may not cover the binding that served: its hold is released unused.
    const covering = new Set([PAID, ...grants.filter((g) => grantCovers(parseTargets(g.targets), binding)).map((g) => g.id)]);
    const fromHeld = allocate(held.filter((x) => covering.has(x.source)).map((x) => ({ id: x.source, available: x.credits })), debit);
    let left = debit - total(fromHeld);
    // Held amounts (this request's included) are not free: what other requests hold stays theirs.
    const free = [
      ...eligibleGrants(grants, binding, this.now()).map((g) => ({ id: g.id, available: g.remainingCredits - g.heldCredits })),
      { id: PAID, available: bal.paidCredits - bal.paidHeld },
    ];
    const fromFree = left > 0 ? allocate(free, left) : [];
    left -= total(fromFree);
    const owed = left > 0 ? [{ source: PAID, credits: left }] : [];
    return mergeAllocations(mergeAllocations(fromHeld, fromFree), owed);
  }

  /** Releases holds whose requests stopped refreshing them (a crashed process); returns how many. */
  async releaseExpiredHolds(): Promise<number> {
    const now = this.now();
    const expired = await this.database.sql.query<{ id: string; tenant_id: string }>("SELECT id, tenant_id FROM holds WHERE expires_at < ? ORDER BY expires_at LIMIT 500", [now]);
    let released = 0;
    for (const { id, tenant_id } of expired) {
      released += await this.database.sql.transaction(async (tx) => {
        await this.lockBalance(tx, tenant_id);
        const [hold] = await tx.query<{ allocations: string }>("DELETE FROM holds WHERE id = ? AND expires_at < ? RETURNING allocations", [id, now]);
        if (!hold) return 0;
        this.adjustHeld(tx, tenant_id, JSON.parse(hold.allocations) as Allocation[], -1);
        return 1;
      });
    }
    return released;
  }

  /** Adds credits (a grant or paid credits) with its transaction record; once per `externalId`. */
  credit(tenantId: string, input: CreditInput): Promise<{ transactionId: string; applied: boolean }> {
    return this.database.sql.transaction(async (tx) => {
      await this.lockBalance(tx, tenantId);
      const now = this.now();
      const transactionId = newId();
      const recorded = await tx.query(
        "INSERT INTO credit_transactions (id, tenant_id, type, credits, description, external_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (external_id) DO NOTHING RETURNING id",
        [transactionId, tenantId, input.type, input.credits, input.description, input.externalId ?? null, now],
      );
      if (recorded.length === 0) return { transactionId: "", applied: false };
      let source = PAID;
      if (input.grant) {
        source = newId();
        await tx.query("INSERT INTO grants (id, tenant_id, name, total_credits, remaining_credits, held_credits, targets, expires_at, created_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?)", [
          source,
          tenantId,
          input.grant.name,
          input.credits,
          input.credits,
          JSON.stringify(input.grant.targets),
          input.grant.expiresAt,
          now,
        ]);
      } else {
        await tx.query("UPDATE balances SET paid_credits = paid_credits + ? WHERE tenant_id = ?", [input.credits, tenantId]);
      }
      await tx.query("INSERT INTO ledger_entries (id, tenant_id, activity_id, transaction_id, source, credits, created_at) VALUES (?, ?, NULL, ?, ?, ?, ?)", [
        newId(),
        tenantId,
        transactionId,
        source,
        input.credits,
        now,
      ]);
      return { transactionId, applied: true };
    });
  }

  /** The balance (zero for a tenant that never had one) and every grant with credits left, expired ones included. */
  async snapshot(tenantId: string): Promise<{ balance: BalanceRow; grants: GrantRow[]; now: Date }> {
    const { sql } = this.database;
    const now = this.now();
    const [bal] = await sql.query(`SELECT ${BALANCE_COLUMNS} FROM balances WHERE tenant_id = ?`, [tenantId]);
    const balance = bal ? balanceOf(bal) : { paidCredits: 0, paidHeld: 0, carryNum: 0, carryDen: 1, updatedAt: now };
    return { balance, grants: await this.grantsOf(sql, tenantId), now };
  }

  grantIsActive(grant: GrantRow): boolean {
    return grantActive(grant, this.now());
  }
}
