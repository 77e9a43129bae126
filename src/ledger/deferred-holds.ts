// Holds written behind that wait before they are queued (batch.ts): a request that settles
// meanwhile takes its holds into the settle's batch, and no hold row is written for them. Each
// waits from half of DEFER_MS to DEFER_MS, then `due` is given the request's holds to queue.

/** How long a hold written behind may wait before it is queued; half of it at the soonest. */
export const DEFER_MS = 200;

export class DeferredHolds<J> {
  private readonly waiting = new Map<string, { jobs: J[]; at: number }>();
  private timer: Timer | undefined;

  constructor(private readonly due: (jobs: J[]) => void) {}

  add(holdId: string, job: J): void {
    const waiting = this.waiting.get(holdId);
    if (waiting) waiting.jobs.push(job);
    else this.waiting.set(holdId, { jobs: [job], at: performance.now() });
    this.timer ??= setTimeout(() => this.queueDue(), DEFER_MS);
  }

  /** The request's waiting holds, in the order they came, taken out; undefined when none wait. */
  take(holdId: string): J[] | undefined {
    const waiting = this.waiting.get(holdId);
    if (!waiting) return undefined;
    this.waiting.delete(holdId);
    return waiting.jobs;
  }

  /** Every request's waiting holds, taken out. */
  takeAll(): J[][] {
    return [...this.waiting.keys()].map((holdId) => this.take(holdId)!);
  }

  private queueDue(): void {
    this.timer = undefined;
    const since = performance.now() - DEFER_MS / 2;
    for (const [holdId, { at }] of this.waiting) if (at <= since) this.due(this.take(holdId)!);
    if (this.waiting.size) this.timer = setTimeout(() => this.queueDue(), DEFER_MS / 2);
  }
}
