import { and, asc, eq, gt, lt, sql } from "drizzle-orm";
import { add, rational, type Rational } from "../catalogue/price.ts";
import type { Binding } from "../catalogue/types.ts";
import type { Database, Db } from "../db/open.ts";
import { allocate, eligibleGrants, grantActive, grantCovers, mergeAllocations, PAID, parseTargets, total, type Allocation, type GrantRow, type GrantTarget } from "./sources.ts";

// The credit ledger. Every change to money happens in one transaction that first locks the
// tenant's balance row (an UPDATE of it), so concurrent requests of one tenant, in one process or
// several, see each other's holds and debits: no double spend. Different tenants never wait on
// each other.

export interface SettleInput {
  /** The request id: the activity record's id and its hold's id. Settling twice is a no-op. */
  id: string;
  tenantId: string;
  keyId?: string;
  surface: string;
  binding: Binding;
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

const newId = () => crypto.randomUUID();

/** A request's look-ahead hold takes at most this fraction (1/n) of the credits left free. */
const AHEAD_SHARE = 8;

export class Ledger {
  constructor(
    private readonly database: Database,
    readonly holdTtlMs = 10 * 60_000,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private get s() {
    return this.database.schema;
  }

  /** Locks (and if need be creates) the tenant's balance row for the rest of the transaction. */
  private async lockBalance(tx: Db, tenantId: string) {
    const now = this.now();
    const b = this.s.balances;
    let [row] = await tx.update(b).set({ updatedAt: now }).where(eq(b.tenantId, tenantId)).returning();
    if (!row) {
      await tx.insert(b).values({ tenantId, updatedAt: now }).onConflictDoNothing();
      [row] = await tx.update(b).set({ updatedAt: now }).where(eq(b.tenantId, tenantId)).returning();
    }
    return row;
  }

  private grantsOf(tx: Db, tenantId: string): Promise<GrantRow[]> {
    const g = this.s.grants;
    return tx
      .select({ id: g.id, name: g.name, remainingCredits: g.remainingCredits, heldCredits: g.heldCredits, targets: g.targets, expiresAt: g.expiresAt, createdAt: g.createdAt })
      .from(g)
      .where(and(eq(g.tenantId, tenantId), gt(g.remainingCredits, 0)));
  }

  /** Credits a request on `binding` could spend now (read-only: advisory, holds decide). */
  async spendable(tenantId: string, binding: Binding): Promise<number> {
    const { db } = this.database;
    const [bal] = await db.select().from(this.s.balances).where(eq(this.s.balances.tenantId, tenantId));
    const grants = eligibleGrants(await this.grantsOf(db, tenantId), binding, this.now());
    const fromGrants = grants.reduce((n, g) => n + Math.max(0, g.remainingCredits - g.heldCredits), 0);
    return fromGrants + Math.max(0, (bal?.paidCredits ?? 0) - (bal?.paidHeld ?? 0));
  }

  /**
   * Adds to the request's hold: `minimum` credits (or nothing, when fewer are free) plus up to
   * `ahead` more for use still to come. The look-ahead takes at most 1/AHEAD_SHARE of what else is
   * free, so one request never starves the tenant's other requests on a small balance.
   * Returns the credits added.
   */
  reserve(holdId: string, tenantId: string, binding: Binding, minimum: number, ahead: number): Promise<number> {
    return this.database.transaction(async (tx) => {
      const bal = await this.lockBalance(tx, tenantId);
      const grants = eligibleGrants(await this.grantsOf(tx, tenantId), binding, this.now());
      const sources = [
        ...grants.map((g) => ({ id: g.id, available: g.remainingCredits - g.heldCredits })),
        { id: PAID, available: bal.paidCredits - bal.paidHeld },
      ];
      const available = sources.reduce((n, x) => n + Math.max(0, x.available), 0);
      if (available < minimum || available === 0) return 0;
      const extra = Math.min(ahead, Math.floor((available - minimum) / AHEAD_SHARE));
      const allocations = allocate(sources, minimum + extra);
      await this.adjustHeld(tx, tenantId, allocations, +1);

      const h = this.s.holds;
      const expiresAt = new Date(this.now().getTime() + this.holdTtlMs);
      const [existing] = await tx.select().from(h).where(eq(h.id, holdId));
      const merged = mergeAllocations(existing ? (JSON.parse(existing.allocations) as Allocation[]) : [], allocations);
      if (existing) {
        await tx.update(h).set({ allocations: JSON.stringify(merged), totalCredits: total(merged), expiresAt }).where(eq(h.id, holdId));
      } else {
        await tx.insert(h).values({ id: holdId, tenantId, allocations: JSON.stringify(merged), totalCredits: total(merged), createdAt: this.now(), expiresAt });
      }
      return total(allocations);
    });
  }

  /** Keeps a long-running request's hold from being swept. */
  async refresh(holdId: string): Promise<void> {
    const h = this.s.holds;
    await this.database.transaction((tx) =>
      tx.update(h).set({ expiresAt: new Date(this.now().getTime() + this.holdTtlMs) }).where(eq(h.id, holdId)),
    );
  }

  private async adjustHeld(tx: Db, tenantId: string, allocations: Allocation[], sign: 1 | -1): Promise<void> {
    for (const a of allocations) {
      const n = sign * a.credits;
      if (a.source === PAID) {
        const b = this.s.balances;
        await tx.update(b).set({ paidHeld: sql`${b.paidHeld} + ${n}` }).where(eq(b.tenantId, tenantId));
      } else {
        const g = this.s.grants;
        await tx.update(g).set({ heldCredits: sql`${g.heldCredits} + ${n}` }).where(eq(g.id, a.source));
      }
    }
  }

  /**
   * Turns a request's usage into debits and its one activity record, releasing its hold, all in
   * one transaction. The exact sub-credit remainder is carried to the tenant's next request.
   */
  settle(input: SettleInput): Promise<ActivityRow> {
    return this.database.transaction(async (tx) => {
      const a = this.s.activity;
      const [done] = await tx.select({ id: a.id, credits: a.credits, status: a.status }).from(a).where(eq(a.id, input.id));
      if (done) return done;

      const bal = await this.lockBalance(tx, input.tenantId);
      const h = this.s.holds;
      const [hold] = await tx.select().from(h).where(eq(h.id, input.id));
      const held = hold ? (JSON.parse(hold.allocations) as Allocation[]) : [];

      // carry + cost = debit + carry', with debit whole and 0 <= carry' < 1
      const exact = add(rational(BigInt(bal.carryNum), BigInt(bal.carryDen)), input.cost);
      const debit = Number(exact.num / exact.den);
      const carry = rational(exact.num % exact.den, exact.den);

      const debits = this.planDebits(debit, held, await this.grantsOf(tx, input.tenantId), bal, input.binding);
      await this.adjustHeld(tx, input.tenantId, held, -1);
      await this.applyDebits(tx, input.tenantId, debits);
      await tx
        .update(this.s.balances)
        .set({ carryNum: Number(carry.num), carryDen: Number(carry.den) })
        .where(eq(this.s.balances.tenantId, input.tenantId));
      if (hold) await tx.delete(h).where(eq(h.id, input.id));

      await tx.insert(a).values({
        id: input.id,
        tenantId: input.tenantId,
        keyId: input.keyId ?? null,
        surface: input.surface,
        startedAt: input.startedAt,
        finishedAt: input.finishedAt,
        latencyMs: Math.max(0, Math.round(input.latencyMs)),
        provider: input.binding.provider.id,
        model: input.binding.canonical,
        capability: input.binding.capability,
        status: input.status,
        usageUnit: input.usageUnit,
        usageAmount: input.units,
        credits: debit,
        attempts: JSON.stringify(input.attempts),
      });
      if (debits.length) {
        await tx.insert(this.s.ledgerEntries).values(
          debits.map((d) => ({ id: newId(), tenantId: input.tenantId, activityId: input.id, source: d.source, credits: -d.credits, createdAt: input.finishedAt })),
        );
      }
      return { id: input.id, credits: debit, status: input.status };
    });
  }

  /**
   * Which sources pay a debit: first what the request held, in the order it was reserved; then
   * what nobody holds of its eligible sources; and whatever is still owed from paid credits, which
   * may then dip below zero by less than what the holds did not cover (sub-credit carry at most,
   * when every unit was reserved before use).
   */
  private planDebits(debit: number, held: Allocation[], grants: GrantRow[], bal: { paidCredits: number; paidHeld: number }, binding: Binding): Allocation[] {
    // After a fallback, a held grant may not cover the binding that served: its hold is released unused.
    const covering = new Set([PAID, ...grants.filter((g) => grantCovers(parseTargets(g.targets), binding)).map((g) => g.id)]);
    const fromHeld = allocate(held.filter((x) => covering.has(x.source)).map((x) => ({ id: x.source, available: x.credits })), debit);
    let left = debit - total(fromHeld);
    // Held amounts (this request's included) are not free: what other requests hold stays theirs.
    const free = [
      ...eligibleGrants(grants, binding, this.now()).map((g) => ({ id: g.id, available: g.remainingCredits - g.heldCredits })),
      { id: PAID, available: bal.paidCredits - bal.paidHeld },
    ];
    const fromFree = allocate(free, left);
    left -= total(fromFree);
    const owed = left > 0 ? [{ source: PAID, credits: left }] : [];
    return mergeAllocations(mergeAllocations(fromHeld, fromFree), owed);
  }

  private async applyDebits(tx: Db, tenantId: string, debits: Allocation[]): Promise<void> {
    for (const d of debits) {
      if (d.source === PAID) {
        const b = this.s.balances;
        await tx.update(b).set({ paidCredits: sql`${b.paidCredits} - ${d.credits}` }).where(eq(b.tenantId, tenantId));
      } else {
        const g = this.s.grants;
        await tx.update(g).set({ remainingCredits: sql`${g.remainingCredits} - ${d.credits}` }).where(eq(g.id, d.source));
      }
    }
  }

  /** Releases holds whose requests stopped refreshing them (a crashed process); returns how many. */
  async releaseExpiredHolds(): Promise<number> {
    const h = this.s.holds;
    const expired = await this.database.db.select({ id: h.id, tenantId: h.tenantId }).from(h).where(lt(h.expiresAt, this.now())).orderBy(asc(h.expiresAt)).limit(500);
    let released = 0;
    for (const { id, tenantId } of expired) {
      released += await this.database.transaction(async (tx) => {
        await this.lockBalance(tx, tenantId);
        const [hold] = await tx.select().from(h).where(and(eq(h.id, id), lt(h.expiresAt, this.now())));
        if (!hold) return 0;
        await this.adjustHeld(tx, tenantId, JSON.parse(hold.allocations) as Allocation[], -1);
        await tx.delete(h).where(eq(h.id, id));
        return 1;
      });
    }
    return released;
  }

  /** Adds credits (a grant or paid credits) with its transaction record; once per `externalId`. */
  credit(tenantId: string, input: CreditInput): Promise<{ transactionId: string; applied: boolean }> {
    return this.database.transaction(async (tx) => {
      const t = this.s.creditTransactions;
      if (input.externalId) {
        const [seen] = await tx.select({ id: t.id }).from(t).where(eq(t.externalId, input.externalId));
        if (seen) return { transactionId: seen.id, applied: false };
      }
      await this.lockBalance(tx, tenantId);
      const now = this.now();
      const transactionId = newId();
      await tx.insert(t).values({ id: transactionId, tenantId, type: input.type, credits: input.credits, description: input.description, externalId: input.externalId ?? null, createdAt: now });
      let source = PAID;
      if (input.grant) {
        source = newId();
        await tx.insert(this.s.grants).values({
          id: source,
          tenantId,
          name: input.grant.name,
          totalCredits: input.credits,
          remainingCredits: input.credits,
          targets: JSON.stringify(input.grant.targets),
          expiresAt: input.grant.expiresAt,
          createdAt: now,
        });
      } else {
        const b = this.s.balances;
        await tx.update(b).set({ paidCredits: sql`${b.paidCredits} + ${input.credits}` }).where(eq(b.tenantId, tenantId));
      }
      await tx.insert(this.s.ledgerEntries).values({ id: newId(), tenantId, transactionId, source, credits: input.credits, createdAt: now });
      return { transactionId, applied: true };
    });
  }

  /** The balance row and every grant with credits left (expired ones included, marked by the caller). */
  async snapshot(tenantId: string) {
    const { db } = this.database;
    const [bal] = await db.select().from(this.s.balances).where(eq(this.s.balances.tenantId, tenantId));
    const grants = await this.grantsOf(db, tenantId);
    return { balance: bal, grants, now: this.now() };
  }

  grantIsActive(grant: GrantRow): boolean {
    return grantActive(grant, this.now());
  }
}
