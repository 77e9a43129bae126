import type { Binding } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { Database } from "../db/open.ts";
import type { SqlTx } from "../db/sql.ts";
import { BALANCE_COLUMNS, balanceOf, type BalanceRow } from "./balance-rows.ts";
import { LedgerBatcher } from "./batch.ts";
import type { ActivityRow, SettleInput } from "./batch-requests.ts";
import type { Checkpoint } from "./checkpoint.ts";
import { FundsView } from "./funds-view.ts";
import { HoldKeeper } from "./hold-keeper.ts";
import { grantActive, PAID, total, type Allocation, type GrantRow, type GrantTarget } from "./sources.ts";

export type { ActivityRow, SettleInput } from "./batch-requests.ts";

// The credit ledger. Every change to money happens in a transaction that first locks the
// tenant's balance row, so concurrent requests of one tenant, in one process or several, see
// each other's holds and debits: no double spend. Different tenants never wait on each other.
// Holds and settles, the per-request path, are batched (batch.ts); grants and top-ups are rare
// and run one by one here. The holds of this process are kept alive, and those of dead processes
// settled from their checkpoints, by the hold keeper (hold-keeper.ts).

export interface CreditInput {
  credits: number;
  type: "grant" | "top_up" | "adjustment" | "welcome";
  description: string;
  /** Makes the event happen once: a second call with the same id changes nothing. */
  externalId?: string;
  grant?: { name: string; expiresAt: Date | null; targets: GrantTarget[] };
}

/** What a credit did: `applied` is false when its `externalId` had been credited before. */
export interface Credited {
  transactionId: string;
  applied: boolean;
}

/** A credit transaction's entry on one source (paid credits or a grant). */
const TRANSACTION_ENTRY = "INSERT INTO ledger_entries (id, tenant_id, activity_id, transaction_id, source, credits, created_at) VALUES (?, ?, NULL, ?, ?, ?, ?)";
const newId = () => crypto.randomUUID();

export class Ledger {
  private readonly batcher: LedgerBatcher;
  readonly holds: HoldKeeper;
  /** Each tenant's funds as this instance knows them: admissions read no database. */
  readonly funds: FundsView;
  private readonly writeObservers: ((seconds: number) => void)[] = [];

  constructor(
    private readonly database: Database,
    holdTtlMs = 60_000,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.funds = new FundsView(database, now);
    this.batcher = new LedgerBatcher(database, holdTtlMs, now, (tenants, seconds) => {
      this.funds.changed(new Set(tenants));
      for (const observe of this.writeObservers) observe(seconds);
    });
    this.holds = new HoldKeeper(database, this.batcher, holdTtlMs, now);
  }

  /** Calls `observe` with how long each batch of ledger writes took to commit. */
  observeWrites(observe: (seconds: number) => void): void {
    this.writeObservers.push(observe);
  }

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

  /** Credits a request on `binding` could spend now (advisory, holds decide), from this instance's view of the tenant's funds. */
  spendable(tenantId: string, binding: Binding): Promise<number> {
    return this.funds.spendable(tenantId, binding);
  }

  /**
   * Adds to the request's hold: `minimum` credits (or nothing, when fewer are free) plus up to
   * `ahead` more for use still to come, at most an eighth of what else is free, so one request
   * never starves the tenant's other requests on a small balance. Returns what this call added.
   * A new hold is stored with `checkpoint`, what a recovery would settle it from.
   */
  reserve(holdId: string, tenantId: string, binding: Binding, minimum: number, ahead: number, checkpoint: Checkpoint): Promise<Allocation[]> {
    return this.reserveAs(holdId, tenantId, binding, minimum, ahead, checkpoint, 0);
  }

  /**
   * `credits` for the request to use at once, its hold written behind: undefined (nothing
   * reserved) unless the funds view allows it (FundsView.mayWriteBehind). Else the reserve is
   * under way, and says what the database added: less than `credits` only when other processes
   * spent the tenant's credits meanwhile.
   */
  reserveBehind(holdId: string, tenantId: string, binding: Binding, credits: number, checkpoint: Checkpoint): Promise<Allocation[]> | undefined {
    if (!this.funds.mayWriteBehind(tenantId, binding, credits)) return undefined;
    return this.reserveAs(holdId, tenantId, binding, credits, 0, checkpoint, credits);
  }

  private reserveAs(holdId: string, tenantId: string, binding: Binding, minimum: number, ahead: number, checkpoint: Checkpoint, behind: number): Promise<Allocation[]> {
    const answered = this.funds.reserving(tenantId, minimum + ahead, behind);
    const reserved = this.batcher.reserve({ holdId, tenantId, binding, minimum, ahead, checkpoint }, behind > 0);
    reserved.then(
      (added) => answered(total(added)),
      () => answered(0),
    );
    return reserved;
  }

  /** Writes the request's holds written behind now, rather than within `DEFER_MS` (something of the request waits for them). */
  hurry(holdId: string): void {
    this.batcher.hurry(holdId);
  }

  /**
   * Turns a request's usage into debits and its one activity record, releasing its hold, in one
   * transaction, after every reserve of the request (holds written behind and not yet written
   * join it: no hold row is written for them). The exact sub-credit remainder is carried to the
   * tenant's next request.
   */
  settle(input: SettleInput): Promise<ActivityRow> {
    return this.batcher.settle(input);
  }

  /** Adds credits (a grant or paid credits) with its transaction record; once per `externalId`. */
  credit(tenantId: string, input: CreditInput): Promise<Credited> {
    return this.withCredits((_tx, credit) => credit(tenantId, input));
  }

  /**
   * Runs `fn` in one ledger transaction, with `credit` adding credits inside it (as `credit`
   * does): `fn`'s own writes and the credits are committed together, or none of them.
   */
  async withCredits<T>(fn: (tx: SqlTx, credit: (tenantId: string, input: CreditInput) => Promise<Credited>) => Promise<T>): Promise<T> {
    const credited = new Set<string>();
    try {
      return await this.database.sql.transaction((tx) =>
        fn(tx, (tenantId, input) => {
          credited.add(tenantId);
          return this.creditIn(tx, tenantId, input);
        }),
      );
    } finally {
      this.funds.invalidate(credited);
    }
  }

  private async creditIn(tx: SqlTx, tenantId: string, input: CreditInput): Promise<Credited> {
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
    await tx.query(TRANSACTION_ENTRY, [newId(), tenantId, transactionId, source, input.credits, now]);
    return { transactionId, applied: true };
  }

  /**
   * Takes a one-off fee (a voice clone's) from paid credits, with its transaction record; once per
   * `externalId`. 402 `insufficient_balance` when the credits free of holds cannot pay it.
   */
  async charge(tenantId: string, input: { credits: number; description: string; externalId: string }): Promise<{ applied: boolean }> {
    const charged = await this.database.sql.transaction(async (tx) => {
      const balance = await this.lockBalance(tx, tenantId);
      const [done] = await tx.query("SELECT id FROM credit_transactions WHERE external_id = ?", [input.externalId]);
      if (done) return { applied: false };
      if (balance.paidCredits - balance.paidHeld < input.credits) throw new ApiError("insufficient_balance", "the balance cannot pay the fee");
      const transactionId = newId();
      const now = this.now();
      await tx.query("INSERT INTO credit_transactions (id, tenant_id, type, credits, description, external_id, created_at) VALUES (?, ?, 'charge', ?, ?, ?, ?)", [
        transactionId,
        tenantId,
        -input.credits,
        input.description,
        input.externalId,
        now,
      ]);
      await tx.query("UPDATE balances SET paid_credits = paid_credits - ? WHERE tenant_id = ?", [input.credits, tenantId]);
      await tx.query(TRANSACTION_ENTRY, [newId(), tenantId, transactionId, PAID, -input.credits, now]);
      return { applied: true };
    });
    this.funds.invalidate([tenantId]);
    return charged;
  }

  /** The balance (zero for a tenant that never had one) and every grant with credits left, expired ones included. */
  async snapshot(tenantId: string): Promise<{ balance: BalanceRow; grants: GrantRow[]; now: Date }> {
    const now = this.now();
    const { balance, grants } = await this.funds.read(tenantId);
    return { balance: balance ?? { paidCredits: 0, paidHeld: 0, carryNum: 0, carryDen: 1, updatedAt: now }, grants, now };
  }

  grantIsActive(grant: GrantRow): boolean {
    return grantActive(grant, this.now());
  }
}
