import { Database as SQLite } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { drizzle as drizzleSqlite, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import { migrate as migrateSqlite } from "drizzle-orm/bun-sqlite/migrator";
import { drizzle as drizzlePg } from "drizzle-orm/postgres-js";
import { migrate as migratePg } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import * as pgSchema from "./schema.pg.ts";
import * as sqliteSchema from "./schema.sqlite.ts";

export type Dialect = "sqlite" | "postgres";

/**
 * The database behind the app. Both dialects' tables have the same columns and the query builder
 * has the same shape at run time, so code above this room is written once against the SQLite
 * typing; anything dialect-specific (transactions, upserts) branches on `dialect`.
 */
export interface Database {
  dialect: Dialect;
  db: BunSQLiteDatabase<typeof sqliteSchema>;
  schema: typeof sqliteSchema;
  close(): Promise<void>;
}

const MIGRATIONS = {
  sqlite: new URL("../../drizzle/sqlite", import.meta.url).pathname,
  postgres: new URL("../../drizzle/pg", import.meta.url).pathname,
};

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
    await migratePg(db, { migrationsFolder: MIGRATIONS.postgres });
    return {
      dialect: "postgres",
      db: db as unknown as Database["db"],
      schema: pgSchema as unknown as typeof sqliteSchema,
      close: () => client.end({ timeout: 5 }),
    };
  }
  const path = sqlitePath(url);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const client = new SQLite(path, { create: true });
  client.exec("PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;");
  const db = drizzleSqlite(client, { schema: sqliteSchema });
  migrateSqlite(db, { migrationsFolder: MIGRATIONS.sqlite });
  return { dialect: "sqlite", db, schema: sqliteSchema, close: async () => client.close() };
}
