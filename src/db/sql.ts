import type { Database as SQLite, Statement } from "bun:sqlite";
import type postgres from "postgres";

// Plain SQL for hot paths (the ledger): one text for both dialects, written with `?` placeholders,
// run as cached prepared statements. Drizzle stays for the schema, migrations and everything
// that is not on the per-request path; this exists because building and preparing each
// statement anew cost the ledger most of its time.

export interface SqlTx {
  /** Rows of a SELECT or of `… RETURNING`; [] for other statements. */
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

export interface SqlRunner extends SqlTx {
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
}

/** Timestamps come back as Date or text (PostgreSQL) or epoch milliseconds (SQLite). */
export const asDate = (v: unknown): Date => (v instanceof Date ? v : typeof v === "string" && !/^\d+$/.test(v) ? new Date(v) : new Date(Number(v)));
export const asDateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : asDate(v));
/** bigint columns come back as strings from postgres.js. */
export const asNumber = (v: unknown): number => Number(v);

export type Serialize = <T>(fn: () => Promise<T>) => Promise<T>;

/** `BEGIN IMMEDIATE` … `COMMIT`, rolled back on error, in the connection's write queue. */
export function sqliteTransaction<T>(client: SQLite, serialize: Serialize, fn: () => Promise<T>): Promise<T> {
  return serialize(async () => {
    client.exec("BEGIN IMMEDIATE");
    try {
      const result = await fn();
      client.exec("COMMIT");
      return result;
    } catch (err) {
      client.exec("ROLLBACK");
      throw err;
    }
  });
}

export function sqliteRunner(client: SQLite, serialize: Serialize): SqlRunner {
  const statements = new Map<string, Statement>();
  const run = async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    let stmt = statements.get(text);
    if (!stmt) statements.set(text, (stmt = client.prepare(text)));
    return stmt.all(...(params.map((p) => (p instanceof Date ? p.getTime() : p)) as never[])) as T[];
  };
  return {
    query: run,
    transaction: (fn) => sqliteTransaction(client, serialize, () => fn({ query: run })),
  };
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
  const on = (sql: postgres.Sql | postgres.TransactionSql) => ({
    query: async <T>(text: string, params: unknown[] = []) =>
      (await sql.unsafe(numbered(text), params.map((p) => (p instanceof Date ? p.toISOString() : p)) as never[], { prepare: true })) as unknown as T[],
  });
  return {
    ...on(client),
    transaction: (fn) => client.begin((tx) => fn(on(tx))) as Promise<never>,
  };
}
