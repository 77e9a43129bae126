// Holds written behind that wait before they are queued (batch.ts): a request that settles
// meanwhile takes its holds into the settle's batch, and no hold row is written for them. Each
// waits from half of DEFER_MS to DEFER_MS, then `due` is given the request's holds to queue.

/** How long a hold written behind may wait before it is queued; half of it at the soonest. */
export const DEFER_MS = 200;

export class DeferredHolds<J> {
  private readonly waiting = new Map<string, { tenantId: string; jobs: J[]; at: number }>();
  /** The hold ids waiting, by tenant. */
  private readonly byTenant = new Map<string, Set<string>>();
  private timer: Timer | undefined;

  constructor(private readonly due: (jobs: J[]) => void) {}

  add(holdId: string, tenantId: string, job: J): void {
    const waiting = this.waiting.get(holdId);
    if (waiting) waiting.jobs.push(job);
    else {
      this.waiting.set(holdId, { tenantId, jobs: [job], at: performance.now() });
      let ids = this.byTenant.get(tenantId);
      if (!ids) this.byTenant.set(tenantId, (ids = new Set()));
      ids.add(holdId);
    }
    // Unref'd: a process that exits without stopping its ledger (HoldKeeper.stop writes what waits) has crashed as far as its holds go.
    this.timer ??= setTimeout(() => this.queueDue(), DEFER_MS).unref();
  }

  /** The request's waiting holds, in the order they came, taken out; undefined when none wait. */
  take(holdId: string): J[] | undefined {
    const waiting = this.waiting.get(holdId);
    if (!waiting) return undefined;
    this.waiting.delete(holdId);
    const ids = this.byTenant.get(waiting.tenantId)!;
    ids.delete(holdId);
    if (!ids.size) this.byTenant.delete(waiting.tenantId);
    return waiting.jobs;
  }

  /** Every waiting hold of the tenant, taken out, request by request. */
  takeTenant(tenantId: string): J[][] {
    return [...(this.byTenant.get(tenantId) ?? [])].map((holdId) => this.take(holdId)!);
  }

  /** Every request's waiting holds, taken out. */
  takeAll(): J[][] {
    return [...this.waiting.keys()].map((holdId) => this.take(holdId)!);
  }

  private queueDue(): void {
    this.timer = undefined;
    const since = performance.now() - DEFER_MS / 2;
    for (const [holdId, { at }] of this.waiting) if (at <= since) this.due(this.take(holdId)!);
    if (this.waiting.size) this.timer = setTimeout(() => this.queueDue(), DEFER_MS / 2).unref();
  }
}
