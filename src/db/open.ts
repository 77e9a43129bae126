import { Database as SQLite } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { Worker } from "node:worker_threads";
import { drizzle as drizzleSqlite, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { migrate as migrateSqlite } from "drizzle-orm/bun-sqlite/migrator";
import { drizzle as drizzlePg } from "drizzle-orm/postgres-js";
import { migrate as migratePg } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { projectFile } from "../project-file.ts";
import * as pgSchema from "./schema.pg.ts";
import * as sqliteSchema from "./schema.sqlite.ts";
import { postgresRunner, SqliteWriter, sqliteRunner, type SqlRunner } from "./sql.ts";
import { SqliteWorker, workerRunner } from "./sqlite-worker.ts";
import { WriteTurns } from "./write-turns.ts";

export type Dialect = "sqlite" | "postgres";

/**
 * The database behind the app. Both dialects' tables have the same columns and the query builder
 * has the same shape at run time, so code above this room is written once against the SQLite
 * typing; anything dialect-specific (transactions, upserts) branches on `dialect`.
 */
export type Db = BunSQLiteDatabase<typeof sqliteSchema>;

/** The query builder for reads: writes have no way but `transaction` (see there). */
export type ReadDb = Omit<Db, "insert" | "update" | "delete" | "run" | "transaction" | "batch">;

export interface Database {
  dialect: Dialect;
  db: ReadDb;
  schema: typeof sqliteSchema;
  /**
   * Runs `fn` in one transaction: all or nothing. On PostgreSQL a plain transaction (lock rows by
   * updating them first); on SQLite a savepoint inside a group-committed `BEGIN IMMEDIATE` of the
   * one write queue (db/sql.ts), because one connection is shared and an awaited statement of
   * another request must not land inside it. Every write goes through here or `sql.transaction`.
   */
  transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /**
   * Prepared plain SQL for hot paths, and for writes that share a transaction with the ledger's
   * (tenants and keys: a key is funded as it is made). On a SQLite file it runs in a worker thread
   * (db/sqlite-worker.ts), its transactions taking turns with the ones above; in memory, on the
   * one connection.
   */
  sql: SqlRunner;
  close(): Promise<void>;
}

const MIGRATIONS = {
  sqlite: projectFile("drizzle/sqlite").pathname,
  postgres: projectFile("drizzle/pg").pathname,
};

/** An arbitrary constant naming voxroute's migration lock among PostgreSQL advisory locks. */
const MIGRATION_LOCK = 7_402_911_001;

export function dialectOf(url: string): Dialect {
  return /^postgres(ql)?:\/\//.test(url) ? "postgres" : "sqlite";
}

/** `sqlite://./data/x.sqlite`, `sqlite::memory:`, `file:x.sqlite` or a bare path. */
function sqlitePath(url: string): string {
  const path = url.replace(/^sqlite:(\/\/)?/, "").replace(/^file:/, "");
  return path || ":memory:";
}

/** Opens the database named by `url` and applies pending migrations. */
export async function openDatabase(url: string): Promise<Database> {
  if (dialectOf(url) === "postgres") {
    const client = postgres(url, { max: 10, onnotice: () => {} });
    const db = drizzlePg(client, { schema: pgSchema });
    // Instances of a fleet start together: one migrates while the others wait on this lock.
    const lock = await client.reserve();
    try {
      await lock`select pg_advisory_lock(${MIGRATION_LOCK})`;
      await migratePg(db, { migrationsFolder: MIGRATIONS.postgres });
    } finally {
      await lock`select pg_advisory_unlock(${MIGRATION_LOCK})`;
      lock.release();
    }
    return {
      dialect: "postgres",
      db: db as unknown as Db,
      schema: pgSchema as unknown as typeof sqliteSchema,
      transaction: (fn) => db.transaction((tx) => fn(tx as unknown as Db)),
      sql: postgresRunner(client),
      close: () => client.end({ timeout: 5 }),
    };
  }
  const path = sqlitePath(url);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const client = new SQLite(path, { create: true });
  // WAL with synchronous=NORMAL: a commit survives a process crash (kill -9); only an OS crash or power
  // loss can drop the last commits. FULL would fsync every commit and cap the ledger near 800 req/s.
  client.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;");
  const db = drizzleSqlite(client, { schema: sqliteSchema });
  migrateSqlite(db, { migrationsFolder: MIGRATIONS.sqlite });
  if (path === ":memory:") {
    // No other thread can open an in-memory database: its statements run on this connection.
    const writer = new SqliteWriter(client);
    const close = async () => client.close();
    return { dialect: "sqlite", db, schema: sqliteSchema, transaction: (fn) => writer.transaction(() => fn(db)), sql: sqliteRunner(client, writer), close };
  }
  const checkpointer = startCheckpointer(client, path);
  const worker = new SqliteWorker(path);
  const turns = new WriteTurns();
  const writer = new SqliteWriter(client, turns);
  const close = async () => {
    await worker.stop();
    await checkpointer.stop();
    client.close();
  };
  return { dialect: "sqlite", db, schema: sqliteSchema, transaction: (fn) => writer.transaction(() => fn(db)), sql: workerRunner(worker, turns), close };
}

/**
 * Moves WAL checkpoints (SQLite's fsyncs) to a worker thread, so that the event loop never waits on
 * the disk; should the worker fail, the connection checkpoints for itself again.
 */
function startCheckpointer(client: SQLite, path: string): { stop(): Promise<void> } {
  client.exec("PRAGMA wal_autocheckpoint = 0");
  const worker = new Worker(projectFile("workers/sqlite-checkpointer.ts"), { workerData: { path, everyMs: 1000 } });
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  void exited.then(() => {
    if (!stopping) client.exec("PRAGMA wal_autocheckpoint = 1000");
  });
  worker.on("error", () => {});
  return {
    stop: async () => {
      stopping = true;
      worker.ref(); // an unreferenced worker would let the process end before it has stopped
      worker.postMessage("stop");
      await exited;
    },
  };
}
