import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { createKey } from "./helpers/accounts.ts";
import { withdrawnKeys } from "../src/accounts/keys.ts";
import { openDatabase, type Database } from "../src/db/open.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { TEST_MODEL } from "./fakes/fixed-pcm-provider.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { spawnServer, type ServerProcess } from "./helpers/process.ts";
import { bearer, connect, type Client } from "./helpers/ws-client.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// Revoking a key or disabling a tenant with the operator CLI (another process) ends the open
// sessions it covers, on every server process sharing the database, within seconds; the bill
// stops there and covers only what reached the client. TEST_MODEL costs 10 credits per character.

const CHECK_MS = 300;
const running: ServerProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const s of running) s.proc.kill("SIGKILL");
  for (const c of cleanups.reverse()) await c();
});

async function cli(databaseUrl: string, args: string[]) {
  const proc = Bun.spawn(["bun", "src/cli.ts", ...args], { cwd: new URL("..", import.meta.url).pathname, env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" }, stderr: "pipe" });
  expect({ code: await proc.exited, err: await new Response(proc.stderr).text() }).toEqual({ code: 0, err: "" });
}

const DELIVERED = "This was heard. "; // 16 characters

/** A /v1/tts session whose first text was spoken and confirmed by a flush. */
async function speakingSession(server: ServerProcess, key: string): Promise<Client> {
  const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
  c.send({ type: "text", text: DELIVERED });
  c.send({ type: "flush" });
  while (!c.rec.events.some((e) => e.type === "service.tts_flushed")) {
    if (c.rec.close.code) throw new Error(`closed early: ${JSON.stringify(c.rec.close)}`);
    await Bun.sleep(10);
  }
  return c;
}

async function books(database: Database, tenantId: string) {
  const { db, schema } = database;
  const records = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId));
  const holds = await db.select().from(schema.holds).where(eq(schema.holds.tenantId, tenantId));
  const [balance] = await db.select().from(schema.balances).where(eq(schema.balances.tenantId, tenantId));
  return { records, holds: holds.length, paid: balance.paidCredits, held: balance.paidHeld };
}

function accessTests(name: string, setup: () => Promise<{ url: string; servers: ServerProcess[] }>, skip = false) {
  describe.skipIf(skip)(`ending sessions when access is withdrawn, on ${name}`, () => {
    let url: string;
    let servers: ServerProcess[];
    let database: Database;

    async function account(name: string) {
      const { key, tenantId } = await createKey(database, `${name}-${crypto.randomUUID()}`);
      await new Ledger(database).credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
      return { key, tenantId };
    }

    /** One spoken session per server; then the operator command; every session must close with `close`, its audio first, then the error. */
    async function withdraw(key: string, command: string[], close: { code: number; error: string }) {
      const sessions = await Promise.all(servers.map((s) => speakingSession(s, key)));
      await cli(url, command);
      // Text sent now is never heard: it must not be billed.
      for (const c of sessions) c.send({ type: "text", text: "Never spoken because the key is gone. " });
      for (const c of sessions) {
        const rec = await c.closed;
        expect(rec.close).toEqual({ code: close.code, reason: JSON.stringify({ error: close.error }) });
        expect(rec.events.at(-1)).toEqual({ type: "service.tts_error", code: close.error, message: expect.any(String) });
        expect(rec.audio.length).toBeGreaterThan(0);
        expect(rec.order.lastIndexOf("audio")).toBeLessThan(rec.order.indexOf("service.tts_error"));
      }
      return sessions.length;
    }

    beforeAll(async () => {
      ({ url, servers } = await setup());
      running.push(...servers);
      database = await openDatabase(url);
      cleanups.push(() => database.close());
    }, 30_000);

    test("keys revoke: open sessions close 4401 invalid_api_key; the bill covers only what was heard", async () => {
      const { key, tenantId } = await account("revoked");
      const n = await withdraw(key, ["keys", "revoke", "--tenant", (await tenantName(database, tenantId))!, "--prefix", key.slice(0, 12)], { code: 4401, error: "invalid_api_key" });
      const b = await settled(database, tenantId, n);
      expect(b.records.map((r) => ({ status: r.status, usage: r.usageAmount, credits: r.credits }))).toEqual(
        Array(n).fill({ status: "failed", usage: DELIVERED.length, credits: DELIVERED.length * 10 }),
      );
      expect(b.holds).toBe(0);
      expect(b.held).toBe(0);
      expect(b.paid).toBe(1_000_000 - n * DELIVERED.length * 10);
    }, 20_000);

    test("tenants disable: open sessions close 4403 tenant_disabled, billed the same way", async () => {
      const { key, tenantId } = await account("disabled");
      const n = await withdraw(key, ["tenants", "disable", "--tenant", (await tenantName(database, tenantId))!], { code: 4403, error: "tenant_disabled" });
      const b = await settled(database, tenantId, n);
      expect(b.records.every((r) => r.usageAmount === DELIVERED.length)).toBe(true);
      expect(b.holds).toBe(0);
    }, 20_000);

    test("the check takes any number of keys (in batches of a thousand): among 2,500, exactly the withdrawn ones are found", async () => {
      const revoked = await account("batch-revoked");
      const disabled = await account("batch-disabled");
      const fine = await account("batch-fine");
      const { revokeKeys, setTenantDisabled } = await import("../src/accounts/tenants.ts");
      await revokeKeys(database, revoked.tenantId, revoked.key.slice(0, 12));
      await setTenantDisabled(database, disabled.tenantId, true);
      const keyIds = async (tenantId: string) => (await database.db.select().from(database.schema.apiKeys).where(eq(database.schema.apiKeys.tenantId, tenantId))).map((k) => k.id);
      const [r, d, f] = await Promise.all([revoked, disabled, fine].map((a) => keyIds(a.tenantId)));
      const ids = [...Array.from({ length: 1200 }, () => crypto.randomUUID()), ...r, ...Array.from({ length: 1297 }, () => crypto.randomUUID()), ...d, ...f];
      const found = await withdrawnKeys(database, ids);
      expect(Object.fromEntries(found)).toEqual({ [r[0]]: "invalid_api_key", [d[0]]: "tenant_disabled" });
    });

    test("sessions of other keys and tenants go on", async () => {
      const keep = await account("kept");
      const gone = await account("gone");
      const kept = await Promise.all(servers.map((s) => speakingSession(s, keep.key)));
      await withdraw(gone.key, ["keys", "revoke", "--tenant", (await tenantName(database, gone.tenantId))!, "--prefix", gone.key.slice(0, 12)], { code: 4401, error: "invalid_api_key" });
      await Bun.sleep(CHECK_MS * 3);
      for (const c of kept) {
        expect(c.rec.close.code).toBe(0);
        c.send({ type: "close" });
        expect((await c.closed).close.code).toBe(1000);
      }
    }, 20_000);
  });
}

async function tenantName(database: Database, tenantId: string) {
  const [row] = await database.db.select({ name: database.schema.tenants.name }).from(database.schema.tenants).where(eq(database.schema.tenants.id, tenantId));
  return row?.name;
}

/** The books once every session's activity record is written. */
async function settled(database: Database, tenantId: string, sessions: number) {
  for (let i = 0; i < 100; i++) {
    const b = await books(database, tenantId);
    if (b.records.length >= sessions && b.holds === 0) return b;
    await Bun.sleep(20);
  }
  return books(database, tenantId);
}

const env = (databaseUrl: string) => ({ DATABASE_URL: databaseUrl, TTS_WORKERS: "1", ACCESS_CHECK_INTERVAL_MS: String(CHECK_MS) });

accessTests("SQLite (server and CLI in separate processes)", async () => {
  const url = `sqlite://${join(tempDir("access-"), "db.sqlite")}`;
  return { url, servers: [await spawnServer(env(url))] };
});

accessTests(
  "PostgreSQL (two server processes and the CLI)",
  async () => {
    const fresh = await freshPostgres();
    cleanups.push(fresh.drop);
    return { url: fresh.url, servers: await Promise.all([spawnServer(env(fresh.url)), spawnServer(env(fresh.url))]) };
  },
  !postgresAvailable,
);
