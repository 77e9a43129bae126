import type { Database as SQLite, Statement } from "bun:sqlite";
import type postgres from "postgres";
import type { WriteTurns } from "./write-turns.ts";

// Plain SQL for hot paths (the ledger): one text for both dialects, written with `?` placeholders,
// run as cached prepared statements. Drizzle stays for the schema, migrations and everything
// that is not on the per-request path; this exists because building and preparing each
// statement anew cost the ledger most of its time. Tenants and keys are written here too, so
// that one transaction can make a key and fund it.

export interface SqlQuery {
  /** Rows of a SELECT or of `… RETURNING`; [] for other statements. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

export interface SqlTx extends SqlQuery {
  /**
   * A write whose result nobody needs: on PostgreSQL it is sent together with the COMMIT, in one
   * round trip (if it fails, the transaction rolls back and the error is thrown); on SQLite it
   * runs at once.
   */
  later(text: string, params?: unknown[]): void;
}

export interface SqlRunner extends SqlQuery {
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  /**
   * On a SQLite file only: runs the procedure `name` of workers/sqlite-writer.ts whole, in a
   * write transaction of the worker thread's own, with what `args` makes (plain JSON) once it is
   * its turn to write, and answers what it returned: none of its code runs on the event loop.
   * Elsewhere the caller runs the same code in `transaction`.
   */
  inWorker?(name: string, args: () => unknown): Promise<unknown>;
}

/** Parameters as SQLite binds them: a Date as epoch milliseconds, as its columns store it. */
export const sqliteParams = (values: unknown[] = []) => values.map((p) => (p instanceof Date ? p.getTime() : p));

/** Timestamps come back as Date or text (PostgreSQL) or epoch milliseconds (SQLite). */
export const asDate = (v: unknown): Date => (v instanceof Date ? v : typeof v === "string" && !/^\d+$/.test(v) ? new Date(v) : new Date(Number(v)));
export const asDateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : asDate(v));
/** bigint columns come back as strings from postgres.js. */
export const asNumber = (v: unknown): number => Number(v);

/**
 * SQLite's write transactions, with group commit. Callers queue; whatever is queued when the
 * connection is free runs inside one `BEGIN IMMEDIATE … COMMIT`, each caller in its own
 * savepoint (rolled back alone when it throws). A caller's promise settles only after the
 * COMMIT, so durability is as if each had committed alone; the WAL is written once per batch.
 */
interface Job {
  fn: () => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

export class SqliteWriter {
  private queue: Job[] = [];
  private running = false;

  constructor(
    private readonly client: SQLite,
    /** Shared with the SQLite worker's transactions, when there is one: one writer at a time. */
    private readonly turns?: WriteTurns,
    private readonly maxBatch = 256,
  ) {}

  transaction<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, this.maxBatch);
        await (this.turns ? this.turns.run(() => this.runBatch(batch)) : this.runBatch(batch));
      }
    } finally {
      this.running = false;
    }
  }

  private async runBatch(batch: Job[]): Promise<void> {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      this.client.exec("BEGIN IMMEDIATE");
      for (const job of batch) {
        this.client.exec("SAVEPOINT job");
        try {
          const value = await job.fn();
          this.client.exec("RELEASE job");
          outcomes.push({ ok: true, value });
        } catch (error) {
          // After some errors (full disk, I/O) SQLite has rolled the whole transaction back itself:
          // then there is no savepoint to return to, and the batch fails below.
          this.client.exec("ROLLBACK TO job");
          this.client.exec("RELEASE job");
          outcomes.push({ ok: false, error });
        }
      }
      this.client.exec("COMMIT");
    } catch (error) {
      try {
        if (this.client.inTransaction) this.client.exec("ROLLBACK");
      } catch {}
      for (const job of batch) job.reject(error);
      return;
    }
    batch.forEach((job, i) => {
      const o = outcomes[i];
      if (o.ok) job.resolve(o.value);
      else job.reject(o.error);
    });
  }
}

/** Runs a statement on a SQLite connection at once, each text prepared once. */
export type RunNow = <T>(text: string, params?: unknown[]) => T[];

export function runsNow(client: SQLite): RunNow {
  const statements = new Map<string, Statement>();
  return <T>(text: string, params: unknown[] = []): T[] => {
    let stmt = statements.get(text);
    if (!stmt) statements.set(text, (stmt = client.prepare(text)));
    return stmt.all(...(sqliteParams(params) as never[])) as T[];
  };
}

/** A transaction on the SQLite connection that holds it: `later` runs at once and throws at once, inside it (a failed write rolls it back). */
export const nowTx = (run: RunNow): SqlTx => ({ query: async (text, params) => run(text, params), later: (text, params) => void run(text, params) });

export function sqliteRunner(client: SQLite, writer: SqliteWriter): SqlRunner {
  const tx = nowTx(runsNow(client));
  return { query: tx.query, transaction: (fn) => writer.transaction(() => fn(tx)) };
}

export function postgresRunner(client: postgres.Sql): SqlRunner {
  const texts = new Map<string, string>();
  const numbered = (text: string) => {
    let t = texts.get(text);
    if (!t) {
      let n = 0;
      texts.set(text, (t = text.replace(/\?/g, () => `$${++n}`)));
    }
    return t;
  };
  const send = <T>(sql: postgres.Sql, text: string, params: unknown[] = []) =>
    sql.unsafe(numbered(text), params.map((p) => (p instanceof Date ? p.toISOString() : p)) as never[], { prepare: true }) as unknown as Promise<T[]>;
  return {
    query: (text, params) => send(client, text, params),
    // Round trips are the cost here, so nothing waits that need not: BEGIN goes out with the
    // first statements, and the `later` writes go out with the COMMIT.
    async transaction(fn) {
      const conn = await client.reserve();
      // postgres.js sends a query only when it is awaited or executed: BEGIN must leave now,
      // ahead of the transaction's first statement, or that statement runs outside it.
      const begin = conn.unsafe("BEGIN").execute();
      begin.catch(() => {}); // awaited below; a failure before then must not go unhandled
      const later: { text: string; params?: unknown[] }[] = [];
      try {
        const result = await fn({ query: (text, params) => send(conn, text, params), later: (text, params) => void later.push({ text, params }) });
        await begin;
        const sent = [...later.map((w) => send(conn, w.text, w.params)), conn.unsafe("COMMIT")];
        const outcomes = await Promise.allSettled(sent);
        const failed = outcomes.find((o) => o.status === "rejected");
        if (failed) throw (failed as PromiseRejectedResult).reason; // PostgreSQL turned the COMMIT into a ROLLBACK
        return result;
      } catch (err) {
        await conn.unsafe("ROLLBACK").catch(() => {});
        throw err;
      } finally {
        conn.release();
      }
    },
  };
}
