import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { ensureTenant } from "../src/accounts/keys.ts";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import { openDatabase, type Database } from "../src/db/open.ts";
import { newCheckpoint } from "../src/ledger/checkpoint.ts";
import { DEFER_MS } from "../src/ledger/deferred-holds.ts";
import { type BatchJob, processBatch } from "../src/ledger/batch-process.ts";
import type { SqlTx } from "../src/db/sql.ts";
import { rational } from "../src/catalogue/price.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { Meter } from "../src/ledger/meter.ts";
import { createLogger } from "../src/log.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// A hold written behind waits up to DEFER_MS before it is written (ledger/batch.ts): a request
// that settles within that time writes no hold row at all; one that runs longer has its hold
// written while it runs; a settle that fails leaves the hold to be written, with its final usage,
// and recovered. Seen from the database: a trigger records every hold row ever inserted.

const catalogue = new Catalogue({
  providers: [
    {
      id: "cheap",
      name: "cheap",
      kind: "local",
      requiresVoice: false,
      defaults: {},
      bindings: [{ capability: "tts", id: "cheap-model", canonical: "cheap/cheap-model", streaming: true, synchronous: true, formats: ["pcm"], price: { amount: "0.0000125", per: "character" } }],
    },
  ],
  models: [{ canonical: "cheap/cheap-model", name: "cheap", capability: "tts", aliases: [] }],
});
const cheap = catalogue.bindings[0]!; // 12.5 credits per character
const log = createLogger("silent");
/** Every transaction and ledger batch on `database` fails until `restore`, as when the database is unreachable. */
function unreachable(database: Database) {
  const sql = database.sql;
  const { transaction, inWorker } = sql;
  const state = { refused: 0, restore: () => Object.assign(sql, { transaction, inWorker }) };
  const refuse = async () => {
    state.refused++;
    throw new Error("the database is unreachable");
  };
  sql.transaction = refuse;
  if (inWorker) sql.inWorker = refuse;
  return state;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await Bun.sleep(20);
}

const done = (units: number) => ({ binding: cheap, status: "completed" as const, outcome: "completed" as const, units, startedAt: new Date(), latencyMs: 1, attempts: [] });

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Statements on either database: `sqlite` or `postgres`, by its dialect. */
const either = (database: Database, sqlite: string[], postgres: string[]) =>
  database.sql.transaction(async (tx) => {
    for (const statement of database.dialect === "sqlite" ? sqlite : postgres) tx.later(statement);
  });

function suite(name: string, open: () => Promise<Database>, skip: boolean) {
  describe.skipIf(skip)(`holds written behind on ${name}`, () => {
    let database: Database;
    beforeAll(async () => {
      database = await open();
    });

    /** A tenant far richer than what is held (its holds may be written behind), with the funds view of `ledger` warm, and every hold row inserted for it recorded. */
    async function richTenant(ledger: Ledger): Promise<string> {
      const { tenantId } = await ensureTenant(database, `t-${crypto.randomUUID()}`);
      await ledger.credit(tenantId, { credits: 10_000_000, type: "adjustment", description: "test" });
      const tag = tenantId.replace(/\W/g, "_");
      await either(
        database,
        [
          "CREATE TABLE IF NOT EXISTS holds_seen (id TEXT, tenant_id TEXT)",
          `CREATE TRIGGER seen_${tag} AFTER INSERT ON holds WHEN NEW.tenant_id = '${tenantId}' BEGIN INSERT INTO holds_seen VALUES (NEW.id, NEW.tenant_id); END`,
        ],
        [
          "CREATE TABLE IF NOT EXISTS holds_seen (id TEXT, tenant_id TEXT)",
          "CREATE OR REPLACE FUNCTION hold_seen() RETURNS trigger AS $$ BEGIN INSERT INTO holds_seen VALUES (NEW.id, NEW.tenant_id); RETURN NEW; END $$ LANGUAGE plpgsql",
          `CREATE TRIGGER seen_${tag} AFTER INSERT ON holds FOR EACH ROW WHEN (NEW.tenant_id = '${tenantId}') EXECUTE FUNCTION hold_seen()`,
        ],
      );
      await ledger.spendable(tenantId, cheap);
      return tenantId;
    }

    /** A request that covered 10 characters, its hold written behind (waiting), and delivered 4 of them. */
    function coveredBehind(ledger: Ledger, tenantId: string) {
      const m = new Meter(ledger, log).start(`req_${crypto.randomUUID()}`, { tenantId }, "test");
      expect(m.cover(cheap, 10)).toBe(true);
      m.delivered(cheap, 4);
      return m;
    }

    const seen = async (tenantId: string) => (await database.sql.query<{ id: string }>("SELECT id FROM holds_seen WHERE tenant_id = ?", [tenantId])).map((r) => r.id);
    const holdRow = async (id: string) => (await database.sql.query<{ checkpoint: string }>("SELECT checkpoint FROM holds WHERE id = ?", [id]))[0];
    const records = (tenantId: string) => database.db.select().from(database.schema.activity).where(eq(database.schema.activity.tenantId, tenantId));
    const paid = async (ledger: Ledger, tenantId: string) => (await ledger.snapshot(tenantId)).balance;

    test("requests that settle within DEFER_MS write no hold row: each hold goes into its settle's batch (100 pairs: past a batch's 64), billed exactly", async () => {
      const ledger = new Ledger(database);
      const t = await richTenant(ledger);
      const meter = new Meter(ledger, log);
      const requests = Array.from({ length: 100 }, (_, i) => meter.start(`req_${i}_${crypto.randomUUID()}`, { tenantId: t }, "test"));
      for (const m of requests) expect(m.cover(cheap, 10)).toBe(true); // written behind: answered at once
      const rows = await Promise.all(requests.map((m, i) => m.settle(done(i + 1))));
      const spent = rows.reduce((n, r) => n + r.credits, 0);
      expect(spent).toBe(63_125); // 5050 characters at 12.5 credits, the carry exact
      expect(await paid(ledger, t)).toMatchObject({ paidCredits: 10_000_000 - spent, paidHeld: 0 });
      expect((await records(t)).length).toBe(100);
      await Bun.sleep(DEFER_MS + 50);
      expect(await seen(t)).toEqual([]);
    });

    test("a hold made and settled in one batch costs no statement on the holds table; a stored hold is deleted by its settle", async () => {
      const ledger = new Ledger(database);
      const t = await richTenant(ledger);
      const statements: string[] = [];
      /** Runs one batch in its own transaction, every statement's text recorded. */
      const batch = (jobs: BatchJob[]) =>
        database.sql.transaction((tx) => {
          const seeing: SqlTx = {
            query: (text, values) => {
              statements.push(text);
              return tx.query(text, values);
            },
            later: (text, values) => {
              statements.push(text);
              tx.later(text, values);
            },
          };
          return processBatch(seeing, jobs, { dialect: database.dialect, now: new Date(), holdTtlMs: 60_000 });
        });
      const reserve = (holdId: string): BatchJob => ({
        kind: "reserve",
        input: { holdId, tenantId: t, binding: cheap, minimum: 125, ahead: 0, checkpoint: newCheckpoint("test", undefined, Date.now(), cheap) },
      });
      const settle = (id: string): BatchJob => ({
        kind: "settle",
        input: {
          id,
          tenantId: t,
          surface: "test",
          binding: cheap,
          status: "completed",
          outcome: "completed",
          usageUnit: "characters",
          units: 10,
          cost: rational(125n),
          startedAt: new Date(),
          finishedAt: new Date(),
          latencyMs: 1,
          attempts: [],
        },
      });
      const writes = () => statements.filter((text) => /^(INSERT INTO|DELETE FROM) holds/.test(text));

      const joined = `req_${crypto.randomUUID()}`;
      await batch([reserve(joined), settle(joined)]);
      expect(writes()).toEqual([]);
      const stored = `req_${crypto.randomUUID()}`;
      await batch([reserve(stored)]);
      await batch([settle(stored)]);
      expect(writes().map((text) => text.split(" (")[0])).toEqual(["INSERT INTO holds", "DELETE FROM holds WHERE id IN"]);
      expect(await seen(t)).toEqual([stored]);
      expect(await holdRow(stored)).toBeUndefined();
      expect((await records(t)).map((r) => r.credits)).toEqual([125, 125]);
      expect(await paid(ledger, t)).toMatchObject({ paidCredits: 10_000_000 - 250, paidHeld: 0 });
    });

    test("a request that runs past DEFER_MS has its hold written while it runs, with its checkpoint, and settles it", async () => {
      const ledger = new Ledger(database);
      const t = await richTenant(ledger);
      const m = coveredBehind(ledger, t);
      expect(await holdRow(m.id)).toBeUndefined();
      await Bun.sleep(DEFER_MS + 50);
      expect(await seen(t)).toEqual([m.id]);
      expect(JSON.parse((await holdRow(m.id))!.checkpoint)).toMatchObject({ units: 4 });
      expect((await paid(ledger, t)).paidHeld).toBeGreaterThan(0);
      expect((await m.settle(done(10))).credits).toBe(125);
      expect(await holdRow(m.id)).toBeUndefined();
      expect(await paid(ledger, t)).toMatchObject({ paidCredits: 10_000_000 - 125, paidHeld: 0 });
    });

    test("a settle refused by the database while its hold waits: the hold is written afterwards with the final usage, and recovered from it once", async () => {
      const ledger = new Ledger(database);
      const t = await richTenant(ledger);
      const tag = t.replace(/\W/g, "_");
      await either(
        database,
        [`CREATE TRIGGER refuse_${tag} BEFORE INSERT ON activity WHEN NEW.tenant_id = '${t}' BEGIN SELECT RAISE(ABORT, 'activity refused'); END`],
        [
          "CREATE OR REPLACE FUNCTION refuse_activity() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'activity refused'; END $$ LANGUAGE plpgsql",
          `CREATE TRIGGER refuse_${tag} BEFORE INSERT ON activity FOR EACH ROW WHEN (NEW.tenant_id = '${t}') EXECUTE FUNCTION refuse_activity()`,
        ],
      );
      const m = coveredBehind(ledger, t);
      const failed = await m.settle(done(64)).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(failed?.message).toContain("activity refused"); // after the meter's retries, each with the hold along
      await either(database, [`DROP TRIGGER refuse_${tag}`], [`DROP TRIGGER refuse_${tag} ON activity`]);
      await ledger.holds.stop(); // writes the hold that waits, and the final checkpoint
      expect(await seen(t)).toEqual([m.id]);
      expect(JSON.parse((await holdRow(m.id))!.checkpoint)).toMatchObject({ units: 64 });
      expect(await records(t)).toEqual([]);
      const later = new Ledger(database, 60_000, () => new Date(Date.now() + 3_600_000));
      expect(await later.holds.sweep()).toMatchObject({ recovered: 1 });
      expect(await records(t)).toMatchObject([{ id: m.id, status: "interrupted", usageAmount: 64, credits: 800 }]);
      expect(await paid(ledger, t)).toMatchObject({ paidCredits: 10_000_000 - 800, paidHeld: 0 });
    }, 15_000);

    test("a reserve taken first sees the tenant's holds written behind: they are written ahead of it, so it cannot be given their credits", async () => {
      const ledger = new Ledger(database);
      const t = await richTenant(ledger);
      const m = new Meter(ledger, log).start(`req_${crypto.randomUUID()}`, { tenantId: t }, "test");
      expect(m.cover(cheap, 10)).toBe(true); // 125 credits and more, written behind: waiting
      const other = await ledger.reserve(`req_${crypto.randomUUID()}`, t, cheap, 10_000_000 - 100, 0, newCheckpoint("test", undefined, Date.now(), cheap));
      expect(other).toEqual([]); // what is left once the first request's hold is counted is less than it asks
      expect(await seen(t)).toEqual([m.id]);
      expect((await m.settle(done(10))).credits).toBe(125);
      expect(await paid(ledger, t)).toMatchObject({ paidCredits: 10_000_000 - 125, paidHeld: 0 });
    });

    test("the database unreachable through a settle's tries: the hold is written once it is back, with the final usage, and recovered from it once", async () => {
      const ledger = new Ledger(database);
      const t = await richTenant(ledger);
      const m = coveredBehind(ledger, t);
      const down = unreachable(database);
      const failed = await m.settle(done(64)).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(failed?.message).toBe("the database is unreachable"); // after the meter's retries, the hold tried on its own between them
      expect(down.refused).toBeGreaterThan(5);
      down.restore();
      await until(async () => (await seen(t)).length > 0);
      expect(JSON.parse((await holdRow(m.id))!.checkpoint)).toMatchObject({ units: 64 });
      await ledger.holds.flush();
      const later = new Ledger(database, 60_000, () => new Date(Date.now() + 3_600_000));
      expect(await later.holds.sweep()).toMatchObject({ recovered: 1 });
      expect(await records(t)).toMatchObject([{ id: m.id, status: "interrupted", usageAmount: 64, credits: 800 }]);
      expect(await paid(ledger, t)).toMatchObject({ paidCredits: 10_000_000 - 800, paidHeld: 0 });
    }, 15_000);
  });
}

suite(
  "SQLite",
  async () => {
    const db = await openDatabase(`sqlite://${join(tempDir("deferred-holds-"), "db.sqlite")}`);
    cleanups.push(() => db.close());
    return db;
  },
  false,
);
suite(
  "PostgreSQL",
  async () => {
    const fresh = await freshPostgres();
    const db = await openDatabase(fresh.url);
    cleanups.push(fresh.drop, () => db.close());
    return db;
  },
  !postgresAvailable,
);
