import { describe, expect, test } from "bun:test";
import { getTableConfig as pgConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteConfig, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as pg from "../src/db/schema.pg.ts";
import * as sqlite from "../src/db/schema.sqlite.ts";

// The two dialect schemas are written apart (Drizzle's column builders are per dialect); this
// keeps them in step: the same tables, columns, keys, defaults and indexes.

interface Shape {
  name: string;
  columns: { name: string; notNull: boolean; primary: boolean; unique: boolean; hasDefault: boolean; references: boolean }[];
  indexes: { name: string; unique: boolean; columns: string[] }[];
  primaryKeys: string[][];
}

/** Both dialects' table configs have the same field names. */
function shape(config: any): Shape {
  const referenced = new Set(config.foreignKeys.flatMap((fk: any) => fk.reference().columns.map((c: any) => c.name)));
  return {
    name: config.name,
    columns: config.columns
      .map((c: any) => ({ name: c.name, notNull: c.notNull, primary: c.primary, unique: c.isUnique, hasDefault: c.hasDefault, references: referenced.has(c.name) }))
      .sort((a: any, b: any) => a.name.localeCompare(b.name)),
    indexes: config.indexes
      .map((i: any) => ({ name: i.config.name, unique: !!i.config.unique, columns: i.config.columns.map((c: any) => c.name) }))
      .sort((a: any, b: any) => a.name.localeCompare(b.name)),
    primaryKeys: config.primaryKeys.map((k: any) => k.columns.map((c: any) => c.name)),
  };
}

const pgTables = Object.entries(pg).filter(([, v]) => v instanceof PgTable) as [string, PgTable][];
const sqliteTables = Object.entries(sqlite).filter(([, v]) => v instanceof SQLiteTable) as [string, SQLiteTable][];

describe("the two dialect schemas", () => {
  test("export the same tables", () => {
    expect(pgTables.length).toBeGreaterThan(5);
    expect(pgTables.map(([k]) => k).sort()).toEqual(sqliteTables.map(([k]) => k).sort());
  });

  for (const [key, table] of pgTables) {
    test(`${key}: same columns, keys, defaults and indexes`, () => {
      const other = sqliteTables.find(([k]) => k === key)?.[1];
      expect(other).toBeDefined();
      expect(shape(sqliteConfig(other!))).toEqual(shape(pgConfig(table)));
    });
  }
});
