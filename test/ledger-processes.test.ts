import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { createKey } from "./helpers/accounts.ts";
import { openDatabase, type Database } from "../src/db/open.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { TEST_MODEL } from "./fakes/fixed-pcm-provider.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { spawnServer, type ServerProcess } from "./helpers/process.ts";
import { bearer } from "./helpers/ws-client.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// The ledger across real processes: two instances on one PostgreSQL spending one small balance,
// and a server killed with SIGKILL right after a session completed. TEST_MODEL costs 10 credits
// per character.

const running: ServerProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const s of running) s.proc.kill("SIGKILL");
  for (const c of cleanups.reverse()) await c();
});

type Outcome = { kind: "completed" | "refused" | "exhausted" | "other"; sessionId?: string; code?: number };

/** One session: text and close; how it ended. A 402 before the upgrade shows as a failed handshake. */
function session(server: ServerProcess, key: string, text: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const ws = new WebSocket(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), { headers: bearer(key) } as any);
    let sessionId: string | undefined;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      ws.send(JSON.stringify({ type: "text", text }));
      ws.send(JSON.stringify({ type: "close" }));
    };
    ws.onmessage = (e) => {
      if (typeof e.data === "string") {
        const ev = JSON.parse(e.data);
        if (ev.type === "service.tts_session_ended") sessionId = ev.session_id;
      }
    };
    ws.onclose = (e) => {
      if (!opened) return resolve({ kind: "refused", code: e.code });
      resolve({ kind: e.code === 1000 ? "completed" : e.code === 4402 ? "exhausted" : "other", sessionId, code: e.code });
    };
  });
}

async function reconcile(database: Database, tenantId: string, initial: number) {
  const { db, schema } = database;
  const [bal] = await db.select().from(schema.balances).where(eq(schema.balances.tenantId, tenantId));
  const [activity] = await db
    .select({ n: sql<number>`count(*)`, credits: sql<number>`coalesce(sum(${schema.activity.credits}), 0)` })
    .from(schema.activity)
    .where(eq(schema.activity.tenantId, tenantId));
  const [entries] = await db
    .select({ credits: sql<number>`coalesce(sum(${schema.ledgerEntries.credits}), 0)` })
    .from(schema.ledgerEntries)
    .where(eq(schema.ledgerEntries.tenantId, tenantId));
  const holds = await db.select().from(schema.holds).where(eq(schema.holds.tenantId, tenantId));
  return { paid: bal.paidCredits, held: bal.paidHeld, records: Number(activity.n), debited: Number(activity.credits), entries: Number(entries.credits), holds: holds.length, initial };
}

describe.skipIf(!postgresAvailable)("two server processes on one PostgreSQL", () => {
  test("200 concurrent requests spending one small balance: no double spend, the books reconcile exactly", async () => {
    const fresh = await freshPostgres();
    cleanups.push(fresh.drop);
    const env = { DATABASE_URL: fresh.url, TTS_WORKERS: "1" };
    // Started together: the migration lock lets one migrate while the other waits.
    const [a, b] = await Promise.all([spawnServer(env), spawnServer(env)]);
    running.push(a, b);

    const database = await openDatabase(fresh.url);
    cleanups.push(() => database.close());
    const { key, tenantId } = await createKey(database, "shared-balance");
    const initial = 50 * 200 + 7; // fifty 20-character requests (200 credits each), and a little more
    await new Ledger(database).credit(tenantId, { credits: initial, type: "adjustment", description: "test" });

    const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => session(i % 2 ? a : b, key, "twenty characters!!!")));
    const count = (k: Outcome["kind"]) => outcomes.filter((o) => o.kind === k).length;
    expect(count("other")).toBe(0);
    // The balance pays for 50 (49 at once: each hold keeps one credit for the sub-credit carry).
    expect(count("completed")).toBeGreaterThanOrEqual(45);
    expect(count("completed")).toBeLessThanOrEqual(50);

    const books = await reconcile(database, tenantId, initial);
    expect(books.held).toBe(0);
    expect(books.holds).toBe(0);
    expect(books.paid).toBeGreaterThanOrEqual(0);
    expect(books.paid).toBe(initial - books.debited);
    expect(books.entries).toBe(initial - books.debited); // the +initial credit and every debit
    // Every completed session was billed in full, exactly once.
    expect(books.debited).toBe(count("completed") * 200);
    const ids = outcomes.filter((o) => o.kind === "completed").map((o) => o.sessionId);
    expect(new Set(ids).size).toBe(count("completed"));
  }, 60_000);
});

describe("a server killed right after a session completes", () => {
  async function killAfterCompletion(databaseUrl: string) {
    const env = { DATABASE_URL: databaseUrl, TTS_WORKERS: "1", HOLD_TTL_MS: "2000" };
    const first = await spawnServer(env);
    running.push(first);
    const database = await openDatabase(databaseUrl);
    cleanups.push(() => database.close());
    const { key, tenantId } = await createKey(database, `crash-${crypto.randomUUID()}`);
    await new Ledger(database).credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });

    const done = await session(first, key, "exactly once");
    first.proc.kill("SIGKILL"); // no shutdown, no flush: the moment the client saw the close
    await first.proc.exited;
    expect(done.kind).toBe("completed");

    const second = await spawnServer(env);
    running.push(second);
    const records = await database.db.select().from(database.schema.activity).where(eq(database.schema.activity.tenantId, tenantId));
    expect(records.map((r) => r.id)).toEqual([done.sessionId!]);
    expect(records[0]).toMatchObject({ status: "completed", usageAmount: 12, credits: 120 });
    const books = await reconcile(database, tenantId, 1_000_000);
    expect(books.paid).toBe(1_000_000 - 120);

    // A session cut mid-way by a kill leaves a hold; after restart it lapses and is settled from its
    // checkpoint: no audio went out, so it is recorded `interrupted` and nothing is billed.
    const ws = new WebSocket(second.wsUrl(`/v1/tts?model=${TEST_MODEL}&auto_flush=false`), { headers: bearer(key) } as any);
    await new Promise<void>((resolve) => {
      ws.onmessage = (e) => typeof e.data === "string" && JSON.parse(e.data).type === "service.tts_session_ready" && resolve();
    });
    ws.send(JSON.stringify({ type: "text", text: "held but never finished" }));
    for (let i = 0; i < 50 && (await reconcile(database, tenantId, 0)).held === 0; i++) await Bun.sleep(20);
    expect((await reconcile(database, tenantId, 0)).held).toBeGreaterThan(0);
    second.proc.kill("SIGKILL");
    await second.proc.exited;
    const third = await spawnServer(env);
    running.push(third);
    for (let i = 0; i < 100 && (await reconcile(database, tenantId, 0)).held > 0; i++) await Bun.sleep(100);
    const after = await reconcile(database, tenantId, 1_000_000);
    expect(after).toMatchObject({ held: 0, holds: 0, paid: 1_000_000 - 120, records: 2, debited: 120 });
    const interrupted = await database.db.select().from(database.schema.activity).where(eq(database.schema.activity.status, "interrupted"));
    expect(interrupted.filter((r) => r.tenantId === tenantId)).toMatchObject([{ usageAmount: 0, credits: 0 }]);
  }

  test("SQLite: the usage is there exactly once after restart; a dead session's hold is settled unbilled", async () => {
    await killAfterCompletion(`sqlite://${join(tempDir("crash-"), "db.sqlite")}`);
  }, 60_000);

  test.skipIf(!postgresAvailable)(
    "PostgreSQL: the same",
    async () => {
      const fresh = await freshPostgres();
      cleanups.push(fresh.drop);
      await killAfterCompletion(fresh.url);
    },
    60_000,
  );
});
