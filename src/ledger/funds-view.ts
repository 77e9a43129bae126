import type { Binding } from "../catalogue/types.ts";
import type { Database } from "../db/open.ts";
import { BALANCE_COLUMNS, type BalanceRow, balanceOf, GRANT_COLUMNS, grantOf } from "./balance-rows.ts";
import { eligibleGrants, type GrantRow } from "./sources.ts";

// Each tenant's funds as this instance last read them, less what its own reserves took since:
// admissions are judged from it without a database round trip, and a request of an account far
// richer than what is being reserved for it may take its hold "behind" (the upstream is called
// while the hold is written; see docs/account.md, "Holds written behind").
//
// The view errs on the side of less: a reserve under way counts as taking all it asked for, what
// reserves took counts until a read that began after they were answered, and what settles give
// back counts only from the next read. Reads: after this instance's ledger writes for the tenant
// (in the background), every check interval for tenants used lately (other processes' spending
// and top-ups), and afresh after a credit or a charge here.

export interface Funds {
  balance: BalanceRow | undefined;
  grants: GrantRow[];
}

/** A tenant's credits taken by holds written behind, not yet confirmed, stay under this share (1/n) of the credits the view sees free. */
export const BEHIND_SHARE = 100;
/** Tenants not used for this many check intervals are dropped from the view. */
const UNUSED_CHECKS = 30;

interface TenantFunds {
  funds: Funds | undefined;
  reading: Promise<void> | undefined;
  /** Another read is wanted once the one under way is over (it began before the change). */
  again: boolean;
  /** Bumped when a credit or a charge makes the snapshot (and a read under way) worthless. */
  generation: number;
  /** Credits asked by reserves under way (minimum and ahead), not yet answered. */
  pending: number;
  /** Credits reserves added, with the answer's number, until a read that began after it. */
  taken: { seq: number; credits: number }[];
  /** Credits of holds written behind, not yet answered. */
  behind: number;
  usedAt: number;
}

export class FundsView {
  private readonly tenants = new Map<string, TenantFunds>();
  /** Counts the reserves answered: a read that began after answer n sees its credits. */
  private seq = 0;
  private timer: Timer | undefined;

  constructor(
    private readonly database: Database,
    private readonly now: () => Date,
  ) {}

  /** Reads the tenants used lately every `intervalMs`, so that other processes' changes are seen. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      const idle = performance.now() - UNUSED_CHECKS * intervalMs;
      for (const [id, t] of this.tenants) {
        if (t.usedAt < idle && !t.pending && !t.behind) this.tenants.delete(id);
        else this.refresh(id);
      }
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Credits a request on `binding` could spend now (advisory: the database's holds decide). Reads the database only for a tenant not in the view. */
  async spendable(tenantId: string, binding: Binding): Promise<number> {
    const t = this.tenant(tenantId);
    while (!t.funds) await this.load(tenantId, t);
    return this.free(t, t.funds, binding);
  }

  /** The tenant's balance and grants, read now. */
  async read(tenantId: string): Promise<Funds> {
    const t = this.tenant(tenantId);
    t.generation++;
    t.funds = undefined;
    while (!t.funds) await this.load(tenantId, t);
    return t.funds;
  }

  /**
   * A reserve of up to `asked` credits is under way for the tenant; `behind` of them were granted
   * by `writeBehind` and are already being used. Call the answer with what it added (0 when it failed).
   */
  reserving(tenantId: string, asked: number, behind = 0): (added: number) => void {
    const t = this.tenant(tenantId);
    t.pending += asked;
    t.behind += behind;
    return (added) => {
      t.pending -= asked;
      t.behind -= behind;
      if (added > 0) t.taken.push({ seq: ++this.seq, credits: added });
    };
  }

  /**
   * Whether `credits` may be used before the database holds them: only from a view already read,
   * and only while all that the tenant's holds written behind take stays within 1/BEHIND_SHARE of
   * what the view sees free. On a small balance the answer is no: its holds are taken first.
   */
  mayWriteBehind(tenantId: string, binding: Binding, credits: number): boolean {
    const t = this.tenants.get(tenantId);
    if (!t?.funds) return false;
    t.usedAt = performance.now();
    return (t.behind + credits) * BEHIND_SHARE <= this.free(t, t.funds, binding);
  }

  /**
   * This instance committed the tenants' money (holds, settles): read it again, in the background,
   * once the commit's reserves are answered (so the read drops what they took).
   */
  changed(tenantIds: Iterable<string>): void {
    const known = [...tenantIds].filter((id) => this.tenants.has(id));
    if (!known.length) return;
    setImmediate(() => {
      for (const id of known) this.refresh(id);
    });
  }

  /** Credits were added or charged here: the next admission reads the funds afresh. */
  invalidate(tenantIds: Iterable<string>): void {
    for (const id of tenantIds) {
      const t = this.tenants.get(id);
      if (!t) continue;
      t.generation++;
      t.funds = undefined;
    }
  }

  private free(t: TenantFunds, { balance, grants }: Funds, binding: Binding): number {
    const fromGrants = eligibleGrants(grants, binding, this.now()).reduce((n, g) => n + Math.max(0, g.remainingCredits - g.heldCredits), 0);
    const fromPaid = Math.max(0, (balance?.paidCredits ?? 0) - (balance?.paidHeld ?? 0));
    const taken = t.taken.reduce((n, x) => n + x.credits, 0);
    return Math.max(0, fromGrants + fromPaid - t.pending - taken);
  }

  private tenant(tenantId: string): TenantFunds {
    let t = this.tenants.get(tenantId);
    if (!t) this.tenants.set(tenantId, (t = { funds: undefined, reading: undefined, again: false, generation: 0, pending: 0, taken: [], behind: 0, usedAt: 0 }));
    t.usedAt = performance.now();
    return t;
  }

  private refresh(tenantId: string): void {
    const t = this.tenants.get(tenantId);
    if (t) this.load(tenantId, t).catch(() => {}); // a failed read leaves the snapshot; the next change or check reads again
  }

  /** Reads the funds once (a read under way is shared, and followed by another). */
  private load(tenantId: string, t: TenantFunds): Promise<void> {
    if (t.reading) {
      t.again = true;
      return t.reading;
    }
    const seq = this.seq;
    const generation = t.generation;
    const { sql } = this.database;
    t.reading = (async () => {
      const [[bal], grants] = await Promise.all([
        sql.query(`SELECT ${BALANCE_COLUMNS} FROM balances WHERE tenant_id = ?`, [tenantId]),
        sql.query(`SELECT ${GRANT_COLUMNS} FROM grants WHERE tenant_id = ? AND remaining_credits > 0`, [tenantId]),
      ]);
      if (t.generation !== generation) return;
      t.funds = { balance: bal ? balanceOf(bal) : undefined, grants: grants.map(grantOf) };
      t.taken = t.taken.filter((x) => x.seq > seq);
    })().finally(() => {
      t.reading = undefined;
      if (t.again) {
        t.again = false;
        this.refresh(tenantId);
      }
    });
    return t.reading;
  }
}
