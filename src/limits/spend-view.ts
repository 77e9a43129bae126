import type { Database } from "../db/open.ts";
import type { Budget, BudgetHolder, SpendCap, SpendCaps } from "../ledger/spend-caps.ts";
import { creditsOfBudget, periodsOf, spendOf, storedLimitsOf } from "./spend.ts";

// Each budgeted key's (and tenant's) spend as this instance last read it, plus what this instance
// settled since and what its requests hold now: a request's cover is judged without a database
// round trip (docs/limits.md#budgets). Read when a holder is first used, then every access-check
// interval while it is used (other instances' settles); this instance's own settles count at once,
// until a read that began after them. Other instances' holds are not seen, only their settles:
// across a fleet the cap is exact to within what the others spent in the last interval.

/** Holders not used for this many check intervals (and holding nothing) are dropped. */
const READ = Promise.resolve();
const UNUSED_CHECKS = 30;

interface Holder {
  tenantId: string;
  keyId: string | undefined;
  read: { day: number; month: number; dayCredits: number; monthCredits: number } | undefined;
  /** The holder's budget as read with its spend: a change reaches the requests already running (until the first read, the payer's). */
  budget: Budget | undefined;
  reading: Promise<void> | undefined;
  again: boolean;
  /** Settles of this instance, by the answer's number, until a read that began after them. */
  local: { seq: number; day: number; month: number; credits: number }[];
  /** Credits this instance's live requests of the holder hold. */
  held: number;
  usedAt: number;
}

export class SpendView implements SpendCaps {
  private readonly holders = new Map<string, Holder>();
  private seq = 0;
  private timer: Timer | undefined;

  constructor(
    private readonly database: Database,
    private readonly now: () => Date = () => new Date(),
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      const idle = performance.now() - UNUSED_CHECKS * intervalMs;
      for (const [id, h] of this.holders) {
        if (h.usedAt < idle && !h.held) this.holders.delete(id);
        else this.load(h).catch(() => {}); // a failed read keeps the last one; the next check reads again
      }
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  capOf(payer: BudgetHolder): SpendCap | undefined {
    const { tenant, key } = payer.limits ?? { tenant: {}, key: {} };
    const capped: [Holder, Budget, string][] = [];
    if (payer.keyId && (key.usd_per_day !== undefined || key.usd_per_month !== undefined)) capped.push([this.holder(payer.tenantId, payer.keyId), key, "the key's"]);
    if (tenant.usd_per_day !== undefined || tenant.usd_per_month !== undefined) capped.push([this.holder(payer.tenantId, undefined), tenant, "the account's"]);
    if (!capped.length) return undefined;
    const holders = capped.map(([h]) => h);
    return {
      room: () => Math.min(...capped.map(([h, budget]) => this.room(h, h.budget ?? budget))),
      held: (credits) => {
        for (const h of holders) h.held += credits;
      },
      spent: (credits, startedAt) => {
        const { day, month } = periodsOf(startedAt);
        const seq = ++this.seq;
        for (const h of holders) if (credits > 0) h.local.push({ seq, day, month, credits });
      },
      reason: () => {
        const now = capped.map(([h, budget, whose]) => [h, h.budget ?? budget, whose] as const);
        let [h, budget, whose] = now[0]!;
        for (const c of now) if (this.room(c[0], c[1]) < this.room(h, budget)) [h, budget, whose] = c;
        const daily = budget.usd_per_day !== undefined && this.spend(h).day + h.held >= creditsOfBudget(budget.usd_per_day);
        return daily
          ? `${whose} budget of ${budget.usd_per_day} USD per day is spent: it renews at 00:00 UTC`
          : `${whose} budget of ${budget.usd_per_month} USD per month is spent: it renews on the 1st at 00:00 UTC`;
      },
      ready: () => (holders.every((h) => h.read) ? READ : this.readAll(holders)),
    };
  }

  private async readAll(holders: Holder[]): Promise<void> {
    for (const h of holders) while (!h.read) await this.load(h);
  }

  /** Credits the holder's requests may still hold within `budget`. */
  private room(h: Holder, budget: Budget): number {
    h.usedAt = performance.now();
    const spend = this.spend(h);
    let room = Infinity;
    if (budget.usd_per_day !== undefined) room = Math.min(room, creditsOfBudget(budget.usd_per_day) - spend.day - h.held);
    if (budget.usd_per_month !== undefined) room = Math.min(room, creditsOfBudget(budget.usd_per_month) - spend.month - h.held);
    return Math.max(0, room);
  }

  /** Spent today and this month: the last read (nothing of a day or month it was not read in) and this instance's settles since. */
  private spend(h: Holder): { day: number; month: number } {
    const { day, month } = periodsOf(this.now());
    let spentDay = h.read?.day === day ? h.read.dayCredits : 0;
    let spentMonth = h.read?.month === month ? h.read.monthCredits : 0;
    for (const x of h.local) {
      if (x.day === day) spentDay += x.credits;
      if (x.month === month) spentMonth += x.credits;
    }
    return { day: spentDay, month: spentMonth };
  }

  private holder(tenantId: string, keyId: string | undefined): Holder {
    const id = keyId ? `k:${keyId}` : `t:${tenantId}`;
    let h = this.holders.get(id);
    if (!h) this.holders.set(id, (h = { tenantId, keyId, read: undefined, budget: undefined, reading: undefined, again: false, local: [], held: 0, usedAt: performance.now() }));
    return h;
  }

  /** Reads the holder's spend once (a read under way is shared, and followed by another). */
  private load(h: Holder): Promise<void> {
    if (h.reading) {
      h.again = true;
      return h.reading;
    }
    const seq = this.seq;
    h.reading = (async () => {
      const now = this.now();
      const [spend, limits] = await Promise.all([spendOf(this.database.sql, h.tenantId, h.keyId, now), storedLimitsOf(this.database.sql, h.tenantId, h.keyId)]);
      const { day, month } = periodsOf(now);
      h.read = { day, month, dayCredits: spend.day, monthCredits: spend.month };
      h.budget = { usd_per_day: limits.usd_per_day, usd_per_month: limits.usd_per_month };
      h.local = h.local.filter((x) => x.seq > seq);
    })().finally(() => {
      h.reading = undefined;
      if (h.again) {
        h.again = false;
        this.load(h).catch(() => {});
      }
    });
    return h.reading;
  }
}
