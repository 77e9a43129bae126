import { Worker } from "node:worker_threads";
import type { ProcedureRequest, SqlAnswers, SqlOp, SqlRequest } from "../../workers/sqlite-protocol.ts";
import { projectFile } from "../project-file.ts";
import { type SqlRunner, type SqlTx, sqliteParams } from "./sql.ts";
import type { WriteTurns } from "./write-turns.ts";

// The hot-path SQL of a SQLite database (the ledger's batches, hold checkpoints, balance reads),
// run in a worker thread (workers/sqlite-writer.ts) so that the event loop never executes a
// statement or waits on a commit. A transaction's statements are pipelined like PostgreSQL's: BEGIN
// leaves with the first read, the `later` writes with the COMMIT. Write transactions, the
// worker's and the main connection's (Drizzle, off the hot path), take turns on `WriteTurns`: SQLite has
// one writer, and a main-thread BEGIN waiting on the worker's lock would block the loop.

class SqliteError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = "SQLiteError";
  }
}

export class SqliteWorker {
  private readonly worker: Worker;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (answer: never) => void; reject: (e: unknown) => void }>();
  /** Requests of this turn of the event loop: posted together at its end, one message for all. */
  private outbox: (SqlRequest | ProcedureRequest)[] = [];
  private exited: Promise<void>;
  /** Why the worker is gone, once it is: every request from then on fails with it, none waits forever. */
  private gone: Error | undefined;

  constructor(path: string) {
    this.worker = new Worker(projectFile("workers/sqlite-writer.ts"), { workerData: { path } });
    this.worker.unref();
    this.worker.on("message", (answers: SqlAnswers) => {
      for (const answer of answers) {
        const w = this.waiting.get(answer.id);
        if (!w) continue;
        this.waiting.delete(answer.id);
        if ("rows" in answer) w.resolve(answer.rows as never);
        else if ("result" in answer) w.resolve(answer.result as never);
        else w.reject(new SqliteError(answer.error.message, answer.error.code));
      }
      if (this.waiting.size === 0) this.worker.unref(); // nothing awaited: the process may end
    });
    this.worker.on("error", (err) => this.failAll(err));
    this.exited = new Promise((resolve) => this.worker.once("exit", () => resolve()));
    void this.exited.then(() => {
      this.gone ??= new Error("the SQLite worker stopped");
      this.failAll(this.gone);
    });
  }

  /** Runs `ops` in order; resolves with each one's rows, or rejects with the first failure. */
  send(ops: SqlOp[], read = false): Promise<unknown[][]> {
    return this.ask((id) => ({ id, ops, read }));
  }

  /** Runs the worker's procedure `name` (`args`: plain JSON) in a write transaction of its own; resolves with its answer. */
  procedure(name: string, args: unknown): Promise<unknown> {
    return this.ask((id) => ({ id, procedure: name, args }));
  }

  private ask<T>(request: (id: number) => SqlRequest | ProcedureRequest): Promise<T> {
    if (this.gone) return Promise.reject(this.gone);
    const id = this.nextId++;
    if (this.waiting.size === 0) this.worker.ref(); // answers are awaited: keep the process up for them
    const answer = new Promise<T>((resolve, reject) => this.waiting.set(id, { resolve: resolve as (answer: never) => void, reject }));
    if (this.outbox.length === 0) queueMicrotask(() => this.post());
    this.outbox.push(request(id));
    return answer;
  }

  private post(): void {
    const requests = this.outbox;
    this.outbox = [];
    // As one JSON string when every parameter survives JSON (SqlPost); a procedure's always do.
    if (!this.gone) return this.worker.postMessage(requests.every((r) => !("ops" in r) || r.ops.every((op) => op.params.every(survivesJson))) ? JSON.stringify(requests) : requests);
    for (const { id } of requests) {
      const w = this.waiting.get(id);
      this.waiting.delete(id);
      w?.reject(this.gone);
    }
  }

  async stop(): Promise<void> {
    if (this.outbox.length) this.post(); // requests made before the stop are answered before it
    this.gone ??= new Error("the database is closed");
    this.worker.ref();
    this.worker.postMessage("stop");
    await this.exited;
  }

  private failAll(err: unknown): void {
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}

/** A parameter JSON carries as it is: bytes, bigints and non-finite numbers are cloned instead. */
const survivesJson = (p: unknown) => typeof p === "string" || p === null || typeof p === "boolean" || (typeof p === "number" && Number.isFinite(p));

export function workerRunner(worker: SqliteWorker, turns: WriteTurns): SqlRunner {
  const op = (text: string, values?: unknown[]): SqlOp => ({ text, params: sqliteParams(values) });
  return {
    query: async <T>(text: string, values?: unknown[]) => (await worker.send([op(text, values)], true))[0] as T[],
    inWorker: (name, args) => turns.run(() => worker.procedure(name, args())),
    transaction: <T>(fn: (tx: SqlTx) => Promise<T>) =>
      turns.run(async () => {
        const begin = worker.send([op("BEGIN IMMEDIATE")]);
        begin.catch(() => {}); // awaited below; a failure before then must not go unhandled
        const later: SqlOp[] = [];
        try {
          const result = await fn({
            query: async <R>(text: string, values?: unknown[]) => (await worker.send([op(text, values)]))[0] as R[],
            later: (text, values) => void later.push(op(text, values)),
          });
          await begin;
          await worker.send([...later, op("COMMIT")]);
          return result;
        } catch (err) {
          await worker.send([op("ROLLBACK")]).catch(() => {}); // none to roll back when BEGIN failed
          throw err;
        }
      }),
  };
}
