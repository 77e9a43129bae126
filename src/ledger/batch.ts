import type { Database } from "../db/open.ts";
import type { ActivityRow, RecoverInput, Recovery, ReserveInput, SettleInput } from "./batch-requests.ts";
import { type BatchJob, MAX_BATCH, processBatch } from "./batch-process.ts";
import { batchToWire } from "./batch-wire.ts";
import type { Allocation } from "./sources.ts";

// Holds, settles and recoveries, queued and run many per transaction (batch-process.ts), every
// request's promise settled only after the COMMIT. On a SQLite file the whole batch runs in the
// database's worker thread: the event loop only posts the requests and reads the answers.

const RETRYABLE = new Set(["40P01", "40001"]); // PostgreSQL deadlock / serialization failure

type Job =
  | { kind: "reserve"; input: ReserveInput; resolve: (v: Allocation[]) => void; reject: (e: unknown) => void }
  | { kind: "settle"; input: SettleInput; resolve: (v: ActivityRow) => void; reject: (e: unknown) => void }
  | { kind: "recover"; input: RecoverInput; resolve: (v: Recovery) => void; reject: (e: unknown) => void };

export class LedgerBatcher {
  private queue: Job[] = [];
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

  reserve(input: ReserveInput): Promise<Allocation[]> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "reserve", input, resolve, reject }));
  }

  settle(input: SettleInput): Promise<ActivityRow> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "settle", input, resolve, reject }));
  }

  recover(input: RecoverInput): Promise<Recovery> {
    return new Promise((resolve, reject) => this.enqueue({ kind: "recover", input, resolve, reject }));
  }

  /**
   * Jobs wait for the I/O callbacks of this turn of the event loop: in a burst, the sockets' frames
   * are answered first (the upstream requests go out), and the jobs they made go in fewer, larger batches.
   */
  private enqueue(job: Job): void {
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
      const batch = this.queue.splice(0, MAX_BATCH);
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
        return;
      } catch (err) {
        if (attempt < 3 && RETRYABLE.has((err as { code?: string }).code ?? "")) continue;
        for (const job of batch) job.reject(err);
        return;
      }
    }
  }
}
