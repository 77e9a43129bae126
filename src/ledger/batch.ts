import type { Database } from "../db/open.ts";
import type { ActivityRow, RecoverInput, Recovery, ReserveInput, SettleInput } from "./batch-requests.ts";
import { type BatchJob, MAX_BATCH, processBatch } from "./batch-process.ts";
import { batchToWire } from "./batch-wire.ts";
import { DeferredHolds } from "./deferred-holds.ts";
import type { Allocation } from "./sources.ts";

// Holds, settles and recoveries, queued and run many per transaction (batch-process.ts), every
// request's promise settled only after the COMMIT. On a SQLite file the whole batch runs in the
// database's worker thread: the event loop only posts the requests and reads the answers.
//
// A hold written behind (its credits already in use, counted by the funds view) waits up to
// DEFER_MS before it is queued: a request that settles within that time takes its hold into the
// settle's own batch, where the two cancel out and no hold row is written. A crash within that
// time loses that request's usage, as one within a checkpoint's delay does (hold-keeper.ts).

const RETRYABLE = new Set(["40P01", "40001"]); // PostgreSQL deadlock / serialization failure

/**
 * `joined`: runs in the same batch as the job before it (a settle after the holds it took along).
 * A reserve's `reserved` is its promise; `behind`: a hold written behind (its write may wait);
 * `orphan`: such a hold whose settle failed: it is written whenever the database takes it.
 */
type Job = (
  | {
      kind: "reserve";
      input: ReserveInput;
      resolve: (v: Allocation[]) => void;
      reject: (e: unknown) => void;
      reserved: Promise<unknown>;
      behind: boolean;
      orphan?: boolean;
    }
  | { kind: "settle"; input: SettleInput; resolve: (v: ActivityRow) => void; reject: (e: unknown) => void }
  | { kind: "recover"; input: RecoverInput; resolve: (v: Recovery) => void; reject: (e: unknown) => void }
) & { joined?: boolean };
type Reserve = Extract<Job, { kind: "reserve" }>;

const holdOf = (job: Job) => (job.kind === "settle" ? job.input.id : job.input.holdId);

export class LedgerBatcher {
  private queue: Job[] = [];
  private readonly deferred = new DeferredHolds<Reserve>((jobs) => this.sendAll(jobs));
  /** Each hold id's reserves queued and not yet through their batch: its settle waits until there are none. */
  private readonly sent = new Map<string, { jobs: Set<Reserve>; over: Promise<void>; end: () => void }>();
  /** The server is stopping: a hold that cannot be written now is given up (and logged by its request). */
  private stopping = false;
  private running = 0;
  /** A pump is due after this turn's I/O: see `enqueue`. */
  private due = false;
  private readonly maxConcurrent: number;

  constructor(
    private readonly database: Database,
    private readonly holdTtlMs: number,
    private readonly now: () => Date,
    /** A batch committed in `seconds`: these tenants' money changed. */
    private readonly committed: (tenantIds: string[], seconds: number) => void = () => {},
  ) {
    // PostgreSQL runs several batches side by side on its pool; SQLite has one writer anyway.
    this.maxConcurrent = database.dialect === "postgres" ? 4 : 1;
  }

  /** `behind`: a hold written behind, which waits up to DEFER_MS (deferred-holds.ts). */
  reserve(input: ReserveInput, behind = false): Promise<Allocation[]> {
    let answer!: Pick<Reserve, "resolve" | "reject">;
    const reserved = new Promise<Allocation[]>((resolve, reject) => (answer = { resolve, reject }));
    const job: Reserve = { kind: "reserve", input, ...answer, reserved, behind };
    if (behind) this.deferred.add(input.holdId, input.tenantId, job);
    else {
      // The database must see the tenant's holds written behind before it allocates it more.
      for (const jobs of this.deferred.takeTenant(input.tenantId)) this.sendAll(jobs);
      this.send(job);
    }
    return reserved;
  }

  /** Runs after every reserve of its request: those queued are awaited (PostgreSQL runs batches side by side), those deferred join its batch. */
  async settle(input: SettleInput): Promise<ActivityRow> {
    for (let sent = this.sent.get(input.id); sent; sent = this.sent.get(input.id)) await sent.over;
    return new Promise((resolve, reject) => this.enqueue({ kind: "settle", input, resolve, reject }));
  }

  recover(input: RecoverInput): Promise<Recovery> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "recover", input, resolve, reject }));
  }

  /** Queues the request's deferred holds now: something of the request waits for them. */
  hurry(holdId: string): void {
    this.sendAll(this.deferred.take(holdId) ?? []);
  }

  /** Writes every deferred hold now (the server is stopping); resolves once they are written, or failed. */
  async writeDeferred(): Promise<void> {
    this.stopping = true;
    const groups = this.deferred.takeAll();
    for (const jobs of groups) this.sendAll(jobs);
    await Promise.allSettled(groups.flat().map((job) => job.reserved));
  }

  /** Queues one request's reserves, in one batch. */
  private sendAll(jobs: Reserve[]): void {
    for (const [i, job] of jobs.entries()) {
      job.joined = i > 0;
      this.send(job);
    }
  }

  /** Queues a reserve: its request's settle waits until it is through its batch. */
  private send(job: Reserve): void {
    const { holdId } = job.input;
    this.enqueue(job);
    let sent = this.sent.get(holdId);
    if (!sent) {
      let end!: () => void;
      const over = new Promise<void>((resolve) => (end = resolve));
      this.sent.set(holdId, (sent = { jobs: new Set(), over, end }));
    }
    sent.jobs.add(job);
  }

  /** The batch the reserves were in is over: answered, failed, or put back to wait. */
  private through(batch: Job[]): void {
    for (const job of batch) {
      if (job.kind !== "reserve") continue;
      const sent = this.sent.get(job.input.holdId);
      if (!sent?.jobs.delete(job) || sent.jobs.size) continue;
      this.sent.delete(job.input.holdId);
      sent.end();
    }
  }

  /**
   * Jobs wait for the I/O callbacks of this turn of the event loop: in a burst, the sockets' frames
   * are answered first (the upstream requests go out), and the jobs they made go in fewer, larger batches.
   */
  private enqueue(job: Job): void {
    const waiting = this.deferred.take(holdOf(job));
    if (waiting) {
      // The request's deferred holds go ahead of it, in its batch.
      for (const [i, held] of waiting.entries()) {
        held.joined = i > 0;
        this.queue.push(held);
      }
      job.joined = true;
    }
    this.queue.push(job);
    if (this.due) return;
    this.due = true;
    setImmediate(() => {
      this.due = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.maxConcurrent && this.queue.length) {
      let size = Math.min(MAX_BATCH, this.queue.length);
      while (size < this.queue.length && this.queue[size]!.joined) size++;
      const batch = this.queue.splice(0, size);
      this.running++;
      void this.run(batch).finally(() => {
        this.running--;
        this.pump();
      });
    }
  }

  private async run(batch: Job[]): Promise<void> {
    const jobs: BatchJob[] = batch;
    const { sql, dialect } = this.database;
    for (let attempt = 1; ; attempt++) {
      try {
        const began = performance.now();
        // The batch's clock is read once it has the database (SQLite's write turn, PostgreSQL's transaction), as it waited for it.
        const context = () => ({ dialect, now: this.now(), holdTtlMs: this.holdTtlMs });
        const results = sql.inWorker ? ((await sql.inWorker("ledgerBatch", () => batchToWire(jobs, context()))) as unknown[]) : await sql.transaction((tx) => processBatch(tx, jobs, context()));
        this.committed(
          batch.map((job) => job.input.tenantId),
          (performance.now() - began) / 1000,
        );
        for (const [i, job] of batch.entries()) (job.resolve as (v: unknown) => void)(results[i]);
        this.through(batch);
        return;
      } catch (err) {
        if (attempt < 3 && RETRYABLE.has((err as { code?: string }).code ?? "")) continue;
        const settling = new Set(batch.flatMap((job) => (job.kind === "settle" ? [job.input.id] : [])));
        for (const job of batch) {
          // A hold written behind that came along with its settle waits again, to be written on its
          // own whenever the database takes it: a settle that keeps failing leaves its usage as the
          // hold's checkpoint (metered-request.ts), recovered once the hold is written.
          if (job.kind === "reserve" && job.behind && !this.stopping && (job.orphan || settling.has(job.input.holdId))) {
            job.orphan = true;
            job.joined = false;
            this.deferred.add(job.input.holdId, job.input.tenantId, job);
          } else job.reject(err);
        }
        this.through(batch);
        return;
      }
    }
  }
}
