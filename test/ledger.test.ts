import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { ensureTenant } from "../src/accounts/keys.ts";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import { add, rational, type Rational } from "../src/catalogue/price.ts";
import type { Binding, ProviderSpec } from "../src/catalogue/types.ts";
import { openDatabase, type Database } from "../src/db/open.ts";
import type { ApiError } from "../src/errors.ts";
import { newCheckpoint } from "../src/ledger/checkpoint.ts";
import { costOf, rateOf } from "../src/ledger/cost.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { Meter } from "../src/ledger/meter.ts";
import { createLogger } from "../src/log.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// The money path, on SQLite and on PostgreSQL alike.

const provider = (id: string, price: ProviderSpec["bindings"][number]["price"], capability: "tts" | "stt" = "tts"): ProviderSpec => ({
  id,
  name: id,
  kind: "local",
  requiresVoice: false,
  defaults: {},
  bindings: [{ capability, id: `${id}-model`, canonical: `${id}/${id}-model`, streaming: true, synchronous: true, formats: ["pcm"], price }],
});

const catalogue = new Catalogue({
  providers: [
    provider("cheap", { amount: "0.0000125", per: "character" }), // 12.5 credits per character
    provider("dear", { amount: "0.00005", per: "character" }), // 50 credits per character
    provider("odd", { amount: "0.40", per: "hour" }, "stt"), // 1000/9 credits per second
    provider("fee", { amount: "0.006", per: "minute", requestPrice: "0.002" }, "stt"), // 100/s + 2000 per request
    provider("free", undefined),
  ],
  models: ["cheap", "dear", "odd", "fee", "free"].map((id) => ({
    canonical: `${id}/${id}-model`,
    name: id,
    capability: id === "odd" || id === "fee" ? ("stt" as const) : ("tts" as const),
    aliases: [],
  })),
});
const binding = (id: string): Binding => catalogue.bindings.find((b) => b.provider.id === id)!;
const log = createLogger("silent");

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** Opens the suite's database; `connect` opens it once more, as another server process would. */
interface Opened {
  database: Database;
  connect: () => Promise<Database>;
}

function connector(url: string) {
  return async () => {
    const db = await openDatabase(url);
    cleanups.push(() => db.close());
    return db;
  };
}

async function sqlite(): Promise<Opened> {
  const connect = connector(`sqlite://${join(tempDir("ledger-"), "db.sqlite")}`);
  return { database: await connect(), connect };
}

async function postgres(): Promise<Opened> {
  const fresh = await freshPostgres();
  cleanups.push(fresh.drop);
  const connect = connector(fresh.url);
  return { database: await connect(), connect };
}

let requestNo = 0;
const requestId = () => `req_${++requestNo}_${crypto.randomUUID()}`;

/** What a completed request on the cheap binding settles: `units` characters at its rate. */
const settleInput = (id: string, tenantId: string, units: number) => ({
  id,
  tenantId,
  surface: "test",
  binding: binding("cheap"),
  status: "completed" as const,
  outcome: "completed" as const,
  usageUnit: "characters" as const,
  units,
  cost: costOf(rateOf(binding("cheap")), units),
  startedAt: new Date(),
  finishedAt: new Date(),
  latencyMs: 1,
  attempts: [],
});

function suite(name: string, open: () => Promise<Opened>, skip: boolean) {
  describe.skipIf(skip)(`ledger on ${name}`, () => {
    let database: Database;
    let connect: () => Promise<Database>;
    let ledger: Ledger;
    let meter: Meter;

    async function tenant(paidCredits = 0): Promise<string> {
      const { tenantId } = await ensureTenant(database, `t-${crypto.randomUUID()}`);
      if (paidCredits) await ledger.credit(tenantId, { credits: paidCredits, type: "adjustment", description: "test" });
      return tenantId;
    }

    async function paid(tenantId: string) {
      const { balance } = await ledger.snapshot(tenantId);
      return balance;
    }

    /** The ledger as another process sees it `ms` from now. */
    const later = (ms: number) => new Ledger(database, 60_000, () => new Date(Date.now() + ms));

    const records = (tenantId: string) => database.db.select().from(database.schema.activity).where(eq(database.schema.activity.tenantId, tenantId));

    /** A request that covered `covered` units, delivered `delivered` (written to its hold), and whose process then died. */
    async function deadRequest(tenantId: string, b: string, covered: number, delivered: number) {
      const m = meter.start(requestId(), { tenantId, keyId: "key_1" }, "test");
      expect(await m.cover(binding(b), covered)).toBe(true);
      await m.written();
      m.delivered(binding(b), delivered);
      await ledger.holds.flush();
      return { m };
    }

    /** One metered request: reserve, use `units`, settle. */
    async function request(tenantId: string, b: Binding, units: number, status: "completed" | "failed" = "completed") {
      const m = meter.start(requestId(), { tenantId }, "test");
      const covered = await m.cover(b, units);
      return { covered, ...(await m.settle({ binding: b, status, outcome: status, units: covered ? units : 0, startedAt: new Date(), latencyMs: 5, attempts: [] })), id: m.id };
    }

    beforeAll(async () => {
      ({ database, connect } = await open());
      ledger = new Ledger(database, 60_000);
      meter = new Meter(ledger, log);
    });

    test("exact arithmetic: many random small requests debit the exact rational total within one credit", async () => {
      const t = await tenant(1_000_000_000);
      let exact: Rational = rational(0n);
      let debited = 0;
      for (let i = 0; i < 300; i++) {
        const b = binding(["cheap", "odd", "fee"][i % 3]);
        const units = 1 + Math.floor(Math.random() * 7);
        exact = add(exact, costOf(rateOf(b), units));
        debited += (await request(t, b, units)).credits;
      }
      const floor = Number(exact.num / exact.den);
      expect(debited).toBe(floor); // the carry is what is left: 0 <= exact - debited < 1
      const bal = await paid(t);
      expect(bal.paidCredits).toBe(1_000_000_000 - debited);
      expect(bal.paidHeld).toBe(0);
      expect(rational(BigInt(bal.carryNum), BigInt(bal.carryDen))).toEqual(rational(exact.num - BigInt(floor) * exact.den, exact.den));
    });

    test("1 character at 12.5 credits: debits alternate 12 and 13, never drifting", async () => {
      const t = await tenant(1000);
      const debits = [];
      for (let i = 0; i < 6; i++) debits.push((await request(t, binding("cheap"), 1)).credits);
      expect(debits).toEqual([12, 13, 12, 13, 12, 13]);
      expect((await paid(t)).paidCredits).toBe(1000 - 75);
    });

    test("a per-request price is charged once per request", async () => {
      const t = await tenant(100_000);
      expect((await request(t, binding("fee"), 3)).credits).toBe(2000 + 300);
    });

    test("settling the same request twice records and debits it once", async () => {
      const t = await tenant(10_000);
      const id = requestId();
      const input = settleInput(id, t, 10);
      const first = await ledger.settle(input);
      const second = await ledger.settle(input);
      expect(second).toEqual(first);
      expect((await paid(t)).paidCredits).toBe(10_000 - 125);
      const rows = await database.db.select().from(database.schema.activity).where(eq(database.schema.activity.id, id));
      expect(rows.length).toBe(1);
    });

    test("the same request settled twice in one batch is recorded once; other tenants in the batch are unaffected", async () => {
      const [t1, t2] = [await tenant(10_000), await tenant(10_000)];
      const id = requestId();
      const input = (tenantId: string, rid: string) => settleInput(rid, tenantId, 8);
      const [a, b, c] = await Promise.all([ledger.settle(input(t1, id)), ledger.settle(input(t1, id)), ledger.settle(input(t2, requestId()))]);
      expect(a).toEqual(b);
      expect(c.credits).toBe(100);
      expect((await paid(t1)).paidCredits).toBe(10_000 - 100);
      expect((await paid(t2)).paidCredits).toBe(10_000 - 100);
    });

    test("a batch that fails at one of its writes is rolled back whole: nothing debited or recorded, the hold still held; settled again once the database takes it, billed once", async () => {
      const t = await tenant(10_000);
      const id = requestId();
      await ledger.reserve(id, t, binding("cheap"), 300, 0, newCheckpoint("test", undefined, Date.now(), binding("cheap")));
      // The activity insert comes last in the batch, after the balance's and the hold's writes.
      const refuse =
        name === "SQLite"
          ? [`CREATE TRIGGER refuse_${t.replace(/\W/g, "_")} BEFORE INSERT ON activity WHEN NEW.tenant_id = '${t}' BEGIN SELECT RAISE(ABORT, 'activity refused'); END`]
          : [
              "CREATE OR REPLACE FUNCTION refuse_activity() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'activity refused'; END $$ LANGUAGE plpgsql",
              `CREATE TRIGGER refuse_${t.replace(/\W/g, "_")} BEFORE INSERT ON activity FOR EACH ROW WHEN (NEW.tenant_id = '${t}') EXECUTE FUNCTION refuse_activity()`,
            ];
      await database.sql.transaction(async (tx) => {
        for (const statement of refuse) tx.later(statement);
      });
      const failed = await ledger.settle(settleInput(id, t, 10)).then(
        () => undefined,
        (err: Error) => err,
      );
      expect(failed?.message).toContain("activity refused");
      expect(await paid(t)).toMatchObject({ paidCredits: 10_000, paidHeld: 300 });
      expect(await records(t)).toEqual([]);
      await database.sql.transaction(async (tx) => tx.later(`DROP TRIGGER refuse_${t.replace(/\W/g, "_")}${name === "SQLite" ? "" : " ON activity"}`));
      expect((await ledger.settle(settleInput(id, t, 10))).credits).toBe(125);
      expect(await paid(t)).toMatchObject({ paidCredits: 10_000 - 125, paidHeld: 0 });
      expect((await records(t)).length).toBe(1);
    });

    test("a settle whose observer throws is written once and not tried again: the caller gets the observer's error, the books are right, no hold is left", async () => {
      const t = await tenant(100_000);
      const failing = new Meter(ledger, log);
      let told = 0;
      failing.observe(() => {
        told++;
        throw new Error("an observer's bug");
      });
      const m = failing.start(requestId(), { tenantId: t }, "test");
      expect(await m.cover(binding("cheap"), 10)).toBe(true);
      await m.written();
      const settling = m.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 10, startedAt: new Date(), latencyMs: 1, attempts: [] });
      const thrown = await settling.then(
        () => undefined,
        (err: Error) => err,
      );
      expect(thrown?.message).toBe("an observer's bug");
      // Before: the write and the observers were tried five times over 1.5 s, the observers told each
      // time, and the written request's hold then handed to the keeper as if it were unwritten.
      expect(told).toBe(1);
      expect(await records(t)).toHaveLength(1);
      expect(await paid(t)).toMatchObject({ paidHeld: 0, paidCredits: 100_000 - 125 });
      await ledger.holds.flush();
      expect(await database.sql.query("SELECT id FROM holds WHERE tenant_id = ?", [t])).toEqual([]);
    });

    test("a settle while a reserve is still under way releases that reserve too: nothing stays held", async () => {
      const t = await tenant(100_000);
      const m = meter.start(requestId(), { tenantId: t }, "test");
      expect(await m.cover(binding("cheap"), 10)).toBe(true);
      const extending = m.cover(binding("cheap"), 500); // goes to the database
      expect(extending).toBeInstanceOf(Promise);
      await m.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 10, startedAt: new Date(), latencyMs: 1, attempts: [] });
      await extending;
      expect(await paid(t)).toMatchObject({ paidHeld: 0, paidCredits: 100_000 - 125 });
      const holds = await database.sql.query("SELECT id FROM holds WHERE tenant_id = ?", [t]);
      expect(holds).toEqual([]);
    });

    test("a settle after its hold lapsed and was recovered bills nothing twice and leaves nothing held", async () => {
      const t = await tenant(10_000);
      const id = requestId();
      await ledger.reserve(id, t, binding("cheap"), 1_000, 0, newCheckpoint("test", undefined, Date.now(), binding("cheap")));
      expect((await paid(t)).paidHeld).toBe(1_000);
      await later(3_600_000).holds.sweep();
      const settle = settleInput(id, t, 40);
      expect(await ledger.settle(settle)).toMatchObject({ status: "interrupted", credits: 0 }); // the record already written
      // A hold taken again after the record (a late reserve) is released by the settle.
      await ledger.reserve(id, t, binding("cheap"), 300, 0, newCheckpoint("test", undefined, Date.now(), binding("cheap")));
      await ledger.settle(settle);
      expect(await paid(t)).toMatchObject({ paidHeld: 0, paidCredits: 10_000 });
      expect(await records(t)).toMatchObject([{ id, status: "interrupted", usageAmount: 0, credits: 0 }]);
    });

    test("grants: eligible ones first, soonest expiry first; targets limit what a grant pays for; expired grants pay nothing", async () => {
      const t = await tenant(1_000);
      const day = 86_400_000;
      const later = { name: "later", expiresAt: new Date(Date.now() + 9 * day), targets: [] };
      const sooner = { name: "sooner", expiresAt: new Date(Date.now() + 1 * day), targets: [] };
      const targeted = { name: "odd only", expiresAt: new Date(Date.now() + day / 2), targets: [{ provider: "odd", model: "odd/odd-model" }] };
      const expired = { name: "expired", expiresAt: new Date(Date.now() - 1), targets: [] };
      for (const grant of [later, sooner, targeted, expired]) await ledger.credit(t, { credits: 100, type: "grant", description: grant.name, grant });

      // 10 characters of "cheap" = 125 credits: the targeted grant is not eligible, so "sooner" (100) then "later" (25).
      await request(t, binding("cheap"), 10);
      const byName = async () => Object.fromEntries((await ledger.snapshot(t)).grants.map((g) => [g.name, g.remainingCredits]));
      expect(await byName()).toEqual({ later: 75, "odd only": 100, expired: 100 });
      expect((await paid(t)).paidCredits).toBe(1_000);

      // 1 second of "odd" = 111.1 credits: the targeted grant (soonest) pays 100, then "later" pays the rest.
      await request(t, binding("odd"), 1);
      expect(await byName()).toEqual({ later: 64, expired: 100 });

      // Eligible credits run out before paid ones are touched.
      await request(t, binding("cheap"), 8); // 100 credits: 64 from "later", 36 paid
      expect((await paid(t)).paidCredits).toBe(964);
      expect(await byName()).toEqual({ expired: 100 });
    });

    test("a hold reserves credits: other requests cannot spend them", async () => {
      const t = await tenant(1_000);
      const a = meter.start(requestId(), { tenantId: t }, "test");
      // 40 characters need 501 credits (500 + the carry allowance); a first reserve takes no more.
      expect(await a.cover(binding("cheap"), 40)).toBe(true);
      expect(await ledger.spendable(t, binding("cheap"))).toBe(1_000 - 501);
      const b = meter.start(requestId(), { tenantId: t }, "test");
      expect(await b.cover(binding("cheap"), 40)).toBe(false); // needs 501: more than is free
      expect(await b.cover(binding("cheap"), 30)).toBe(true); // needs 376
      await a.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 40, startedAt: new Date(), latencyMs: 1, attempts: [] });
      await b.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 30, startedAt: new Date(), latencyMs: 1, attempts: [] });
      expect(await paid(t)).toMatchObject({ paidCredits: 1_000 - 500 - 375, paidHeld: 0 });
    });

    /** A ledger that counts its reserves: those waited for, and those written behind. */
    function countingLedger() {
      const counting = new Ledger(database);
      const reserves = { first: 0, behind: 0 };
      const [reserve, reserveBehind] = [counting.reserve.bind(counting), counting.reserveBehind.bind(counting)];
      counting.reserve = (...args) => {
        reserves.first++;
        return reserve(...args);
      };
      counting.reserveBehind = (...args) => {
        const reserving = reserveBehind(...args);
        if (reserving) reserves.behind++;
        return reserving;
      };
      return { counting, reserves };
    }

    test("cover asks the database only when the block is used up, and on a small balance waits for it", async () => {
      const t = await tenant(60_000);
      const { counting, reserves } = countingLedger();
      const m = new Meter(counting, log, { blockUnits: { tts: 100, stt: 10 }, firstUnits: { tts: 20, stt: 2 } }).start(requestId(), { tenantId: t }, "test");
      // The first reserve covers exactly what was asked; the second also a block (100) ahead.
      expect(await m.cover(binding("cheap"), 10)).toBe(true);
      expect(m.cover(binding("cheap"), 10)).toBe(true);
      expect(await m.cover(binding("cheap"), 20)).toBe(true);
      expect(reserves).toEqual({ first: 2, behind: 0 });
      for (let units = 30; units <= 120; units += 10) expect(m.cover(binding("cheap"), units)).toBe(true);
      expect(reserves.first).toBe(2);
      const next = m.cover(binding("cheap"), 121);
      expect(next).toBeInstanceOf(Promise);
      expect(await next).toBe(true);
      expect(reserves).toEqual({ first: 3, behind: 0 });
      await m.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 0, startedAt: new Date(), latencyMs: 1, attempts: [] });
    });

    test("on an account a hundred times richer than what is held behind, cover answers at once and writes the hold behind, a block at a time", async () => {
      const t = await tenant(10_000_000);
      const { counting, reserves } = countingLedger();
      await counting.spendable(t, binding("cheap")); // the view is warm
      const m = new Meter(counting, log, { blockUnits: { tts: 100, stt: 10 }, firstUnits: { tts: 20, stt: 2 } }).start(requestId(), { tenantId: t }, "test");
      expect(m.cover(binding("cheap"), 10)).toBe(true);
      expect(m.cover(binding("cheap"), 20)).toBe(true); // a block (100) ahead
      for (let units = 30; units <= 120; units += 10) expect(m.cover(binding("cheap"), units)).toBe(true);
      expect(reserves).toEqual({ first: 0, behind: 2 });
      await m.written();
      expect((await paid(t)).paidHeld).toBe(1_501); // 120 characters at 12.5 credits, and the carry allowance
      await m.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 120, startedAt: new Date(), latencyMs: 1, attempts: [] });
      expect(await paid(t)).toMatchObject({ paidCredits: 10_000_000 - 1_500, paidHeld: 0 });
    });

    test("waves of concurrent requests until the balance is spent, holds written behind while it is rich: never overspent, each served request billed once", async () => {
      const initial = 90_050;
      const t = await tenant(initial);
      const { counting, reserves } = countingLedger();
      const m = new Meter(counting, log);
      await counting.spendable(t, binding("cheap")); // the view is warm
      let served = 0;
      let refused = 0;
      // Ten characters (125 credits, 126 held with the carry allowance) each: the balance pays for 720, the last wave only in part.
      for (let wave = 0; wave < 10; wave++) {
        await Promise.all(
          Array.from({ length: 100 }, async () => {
            const r = m.start(requestId(), { tenantId: t }, "test");
            const covered = await r.cover(binding("cheap"), 10);
            if (covered) served++;
            else refused++;
            const outcome = covered ? "completed" : "failed";
            await r.settle({ binding: binding("cheap"), status: outcome, outcome, units: covered ? 10 : 0, startedAt: new Date(), latencyMs: 1, attempts: [] });
          }),
        );
      }
      expect(reserves.behind).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
      const balance = await paid(t);
      expect(balance.paidHeld).toBe(0);
      expect(balance.paidCredits).toBeGreaterThanOrEqual(0);
      expect(balance.paidCredits).toBe(initial - served * 125);
      expect((await records(t)).filter((r) => r.status === "completed").length).toBe(served);
    });

    test("two servers spending one balance to its end, holds written behind: overspent by at most 1/100 of the free credits each saw, every served request billed in full", async () => {
      const initial = 90_050;
      const t = await tenant(initial);
      // Each its own ledger (its own funds view); on PostgreSQL its own connection too.
      const other = database.dialect === "postgres" ? await connect() : database;
      const meters = [new Meter(new Ledger(database), log), new Meter(new Ledger(other), log)];
      for (const m of meters) await m.ledger.spendable(t, binding("cheap"));
      let served = 0;
      for (let wave = 0; wave < 10; wave++) {
        await Promise.all(
          Array.from({ length: 100 }, async (_, i) => {
            const r = meters[i % 2].start(requestId(), { tenantId: t }, "test");
            const covered = await r.cover(binding("cheap"), 10);
            if (covered) served++;
            const outcome = covered ? "completed" : "failed";
            await r.settle({ binding: binding("cheap"), status: outcome, outcome, units: covered ? 10 : 0, startedAt: new Date(), latencyMs: 1, attempts: [] });
          }),
        );
      }
      const balance = await paid(t);
      expect(balance.paidHeld).toBe(0);
      expect(balance.paidCredits).toBeGreaterThanOrEqual(-2 * Math.ceil(initial / 100));
      expect(balance.paidCredits).toBe(initial - served * 125);
    });

    test("prefetch reserves the first stretch while the session connects: its first cover needs no round trip", async () => {
      const t = await tenant(10_000_000);
      const m = new Meter(new Ledger(database), log, { blockUnits: { tts: 100, stt: 10 }, firstUnits: { tts: 20, stt: 2 } }).start(requestId(), { tenantId: t }, "test");
      m.prefetch(binding("cheap"));
      await Bun.sleep(50);
      expect(m.cover(binding("cheap"), 20)).toBe(true);
      expect(m.cover(binding("cheap"), 21)).toBe(true); // past the first stretch: the view is warm, the hold written behind
      await m.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 0, startedAt: new Date(), latencyMs: 1, attempts: [] });
      expect(await paid(t)).toMatchObject({ paidCredits: 10_000_000, paidHeld: 0 });
    });

    test("a cover still waiting when the request settles reserves nothing after it: no hold outlives the request", async () => {
      const t = await tenant(10_000_000);
      const m = new Meter(new Ledger(database), log, { blockUnits: { tts: 100, stt: 10 }, firstUnits: { tts: 20, stt: 2 } }).start(requestId(), { tenantId: t }, "test");
      m.prefetch(binding("cheap"));
      const late = m.cover(binding("cheap"), 500); // waits behind the prefetch
      await m.settle({ binding: binding("cheap"), status: "failed", outcome: "failed", units: 0, startedAt: new Date(), latencyMs: 1, attempts: [] });
      expect(await late).toBe(false);
      expect((await paid(t)).paidHeld).toBe(0);
      expect(await database.sql.query("SELECT id FROM holds WHERE tenant_id = ?", [t])).toEqual([]);
    });

    test("a request whose client left before it was served: recorded unbilled, its prefetched hold released", async () => {
      const t = await tenant(10_000_000);
      const m = new Meter(new Ledger(database), log).start(requestId(), { tenantId: t }, "test");
      m.prefetch(binding("cheap"));
      await m.unserved(binding("cheap"), new Date(), "client_left");
      expect((await paid(t)).paidHeld).toBe(0);
      expect(await database.sql.query("SELECT id FROM holds WHERE tenant_id = ?", [t])).toEqual([]);
      const records = await database.sql.query<{ status: string; credits: number | string }>("SELECT status, credits FROM activity WHERE tenant_id = ?", [t]);
      expect(records.map((r) => [r.status, Number(r.credits)])).toEqual([["failed", 0]]);
    });

    test("on a balance not far beyond the first stretch, nothing is held ahead: the first cover decides", async () => {
      const t = await tenant(100);
      const m = new Meter(new Ledger(database), log, { blockUnits: { tts: 100, stt: 10 }, firstUnits: { tts: 20, stt: 2 } }).start(requestId(), { tenantId: t }, "test");
      m.prefetch(binding("cheap"));
      await m.reserved();
      expect((await paid(t)).paidHeld).toBe(0);
      expect(await m.cover(binding("cheap"), 5)).toBe(true);
      await m.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 5, startedAt: new Date(), latencyMs: 1, attempts: [] });
      expect((await paid(t)).paidHeld).toBe(0);
    });

    test("billing in parts: a request two bindings served is one settle and one record naming both, each part at its rate and from the sources its binding may spend", async () => {
      const t = await tenant(10_000);
      // A grant only "dear" may spend: it pays dear's part, never cheap's.
      await ledger.credit(t, { credits: 1_000, type: "grant", description: "dear only", grant: { name: "dear only", expiresAt: null, targets: [{ provider: "dear", model: "*" }] } });
      const m = meter.start(requestId(), { tenantId: t }, "test");
      m.forVoice("first-voice");
      expect(await m.cover(binding("dear"), 10)).toBe(true);
      m.partServed(binding("dear"), 10, "second-voice"); // dear spoke 10 characters, then cheap took over
      expect(await m.cover(binding("cheap"), 18)).toBe(true);
      const settled = await m.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 18, startedAt: new Date(), latencyMs: 1, attempts: [] });
      expect(settled.credits).toBe(500 + 100);
      const [record] = await records(t);
      expect(record).toMatchObject({ provider: "cheap", usageAmount: 18, credits: 600, voice: "first-voice" });
      expect(JSON.parse(record.parts!)).toEqual([
        { provider: "dear", model: "dear/dear-model", units: 10, credits: 500, voice: "first-voice" },
        { provider: "cheap", model: "cheap/cheap-model", units: 8, credits: 100, voice: "second-voice" },
      ]);
      expect((await ledger.snapshot(t)).grants.map((g) => g.remainingCredits)).toEqual([500]);
      expect(await paid(t)).toMatchObject({ paidCredits: 10_000 - 100, paidHeld: 0 });
    });

    test("a dead request that had failed over is recovered in parts from its checkpoint: each part at its own recorded rate", async () => {
      const t = await tenant(100_000);
      const m = meter.start(requestId(), { tenantId: t }, "test");
      m.forVoice("first-voice");
      expect(await m.cover(binding("dear"), 400)).toBe(true);
      m.delivered(binding("dear"), 20);
      m.partServed(binding("dear"), 20, "second-voice");
      m.delivered(binding("cheap"), 28); // cheap delivered 8 more before the process died
      await ledger.holds.flush();
      expect((await later(3_600_000).holds.sweep()).recovered).toBeGreaterThanOrEqual(1);
      const [record] = await records(t);
      expect(record).toMatchObject({ id: m.id, status: "interrupted", provider: "cheap", usageAmount: 28, credits: 20 * 50 + 100 });
      expect(JSON.parse(record.parts!).map((p: { provider: string; units: number; credits: number; voice: string }) => [p.provider, p.units, p.credits, p.voice])).toEqual([
        ["dear", 20, 1000, "first-voice"],
        ["cheap", 8, 100, "second-voice"],
      ]);
      expect(await paid(t)).toMatchObject({ paidCredits: 100_000 - 1100, paidHeld: 0 });
    });

    test("a dead request's lapsed hold is settled from its last checkpoint: delivered units at its rate, status interrupted, the rest released", async () => {
      const t = await tenant(100_000);
      const { m } = await deadRequest(t, "cheap", 400, 40);
      // Noted after the last write: lost with the process (at most the last flush delay's worth).
      m.delivered(binding("cheap"), 55);
      expect((await paid(t)).paidHeld).toBeGreaterThan(0);
      expect((await later(3_600_000).holds.sweep()).recovered).toBeGreaterThanOrEqual(1);
      const [record] = await records(t);
      expect(record).toMatchObject({
        id: m.id,
        status: "interrupted",
        provider: "cheap",
        model: "cheap/cheap-model",
        capability: "tts",
        usageUnit: "characters",
        usageAmount: 40,
        credits: 500,
        keyId: "key_1",
      });
      expect(record.finishedAt.getTime()).toBeGreaterThanOrEqual(record.startedAt.getTime());
      expect(await paid(t)).toMatchObject({ paidHeld: 0, paidCredits: 100_000 - 500 });
    });

    test("a settle that keeps failing leaves its final usage in the checkpoint, and the hold is recovered with it", async () => {
      const t = await tenant(100_000);
      const own = new Ledger(database, 60_000);
      const m = new Meter(own, log).start(requestId(), { tenantId: t }, "test");
      expect(await m.cover(binding("cheap"), 100)).toBe(true);
      m.delivered(binding("cheap"), 20);
      const settle = own.settle.bind(own);
      own.settle = () => Promise.reject(new Error("the database is unreachable"));
      const outcome = { binding: binding("cheap"), status: "completed" as const, outcome: "completed" as const, units: 64, startedAt: new Date(), latencyMs: 1, attempts: [] };
      expect(
        await m.settle(outcome).then(
          () => "settled",
          (err) => (err as Error).message,
        ),
      ).toBe("the database is unreachable"); // after the meter's retries
      own.settle = settle;
      await own.holds.flush(); // the database is back: the final checkpoint is written, its hold left to lapse
      await later(1_000).holds.sweep();
      expect(await records(t)).toMatchObject([{ id: m.id, status: "interrupted", usageAmount: 64, credits: 800 }]);
      expect(await paid(t)).toMatchObject({ paidHeld: 0, paidCredits: 100_000 - 800 });
    }, 10_000);

    test("a recovered request pays its per-request price once, and nothing when nothing was delivered", async () => {
      const t = await tenant(100_000);
      await deadRequest(t, "fee", 10, 3);
      await deadRequest(t, "fee", 10, 0);
      await later(3_600_000).holds.sweep();
      expect((await records(t)).map((r) => r.credits).sort()).toEqual([0, 2000 + 300]);
      expect(await paid(t)).toMatchObject({ paidHeld: 0, paidCredits: 100_000 - 2300 });
    });

    test("a hold its process keeps alive is never recovered by that process; a request settled normally never by anyone", async () => {
      const t = await tenant(100_000);
      let clock = Date.now();
      const own = new Ledger(database, 60_000, () => new Date(clock));
      const m = new Meter(own, log).start(requestId(), { tenantId: t }, "test");
      expect(await m.cover(binding("cheap"), 10)).toBe(true);
      clock += 3_600_000; // its hold lapsed (no refresh ran), but this process knows the request is alive
      await own.holds.sweep();
      expect(await records(t)).toEqual([]);
      expect((await paid(t)).paidHeld).toBeGreaterThan(0);
      await m.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 10, startedAt: new Date(), latencyMs: 1, attempts: [] });
      await later(3_600_000).holds.sweep();
      expect(await records(t)).toMatchObject([{ status: "completed", credits: 125 }]);
    });

    test("two processes recovering the same lapsed holds at once: each is settled once", async () => {
      const t = await tenant(1_000_000);
      for (let i = 0; i < 10; i++) await deadRequest(t, "cheap", 100, 8);
      const clock = () => new Date(Date.now() + 3_600_000);
      // On PostgreSQL a connection of its own, as another server has. SQLite is one synchronous
      // connection per process (a second one in this process would block it): two ledgers share it.
      const other = database.dialect === "postgres" ? await connect() : database;
      const [a, b] = [new Ledger(database, 60_000, clock), new Ledger(other, 60_000, clock)];
      const [ra, rb] = await Promise.all([a.holds.sweep(), b.holds.sweep()]);
      expect(ra.recovered + rb.recovered).toBeGreaterThanOrEqual(10);
      expect((await records(t)).map((r) => r.credits)).toEqual(Array(10).fill(100));
      expect(await paid(t)).toMatchObject({ paidHeld: 0, paidCredits: 1_000_000 - 1000 });
    });

    test("a recovery racing the request's own settle: one record, billed once", async () => {
      const t = await tenant(100_000);
      const { m } = await deadRequest(t, "cheap", 100, 8);
      const [settled] = await Promise.all([
        m.settle({ binding: binding("cheap"), status: "completed", outcome: "completed", units: 16, startedAt: new Date(), latencyMs: 1, attempts: [] }),
        later(3_600_000).holds.sweep(),
      ]);
      const rows = await records(t);
      expect(rows.length).toBe(1);
      expect(rows[0].credits).toBe(settled.credits);
      expect(await paid(t)).toMatchObject({ paidHeld: 0, paidCredits: 100_000 - settled.credits });
    });

    test("admission: 422 for an unpriced model, 402 when nothing can pay, affordable candidates only", async () => {
      const t = await tenant(0);
      const code = (p: Promise<unknown>) =>
        p.then(
          () => "ok",
          (e) => (e as ApiError).code,
        );
      expect(await code(meter.admit({ tenantId: t }, [binding("free")]))).toBe("model_not_priced");
      expect(await code(meter.admit({ tenantId: t }, [binding("cheap")]))).toBe("insufficient_balance");
      await ledger.credit(t, { credits: 50, type: "grant", description: "g", grant: { name: "cheap only", expiresAt: null, targets: [{ provider: "cheap", model: "*" }] } });
      expect((await meter.admit({ tenantId: t }, [binding("odd"), binding("free"), binding("cheap")])).map((b) => b.provider.id)).toEqual(["cheap"]);
    });

    test("crediting with an external id happens once", async () => {
      const t = await tenant(0);
      const once = { credits: 5_000_000, type: "top_up" as const, description: "top-up", externalId: `pay_${crypto.randomUUID()}` };
      expect((await ledger.credit(t, once)).applied).toBe(true);
      expect((await ledger.credit(t, once)).applied).toBe(false);
      expect((await paid(t)).paidCredits).toBe(5_000_000);
    });

    test("concurrent requests on one small balance never spend it twice", async () => {
      const t = await tenant(10_000); // 800 characters' worth at 12.5
      const results = await Promise.all(Array.from({ length: 60 }, () => request(t, binding("cheap"), 40)));
      const served = results.filter((r) => r.covered);
      const bal = await paid(t);
      const spent = results.reduce((n, r) => n + r.credits, 0);
      expect(bal.paidCredits).toBe(10_000 - spent);
      expect(bal.paidCredits).toBeGreaterThanOrEqual(0);
      expect(bal.paidHeld).toBe(0);
      expect(served.length).toBeGreaterThan(0);
      expect(served.length).toBeLessThanOrEqual(20);
    });
  });
}

suite("SQLite", sqlite, false);
suite("PostgreSQL", postgres, !postgresAvailable);
