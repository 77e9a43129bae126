import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey } from "./helpers/accounts.ts";
import { BrokenProvider, FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, type Client, connect } from "./helpers/ws-client.ts";

// Each way a session ends is the `outcome` of its activity record, in the words its log line and
// voxroute_requests_total use, beside the interface's `status`; a record written before outcomes
// were kept is read from its status. On SQLite and on PostgreSQL.

function suite(name: string, databaseUrl: () => Promise<{ url?: string; drop?: () => Promise<void> }>, skip: boolean) {
  describe.skipIf(skip)(`activity outcomes on ${name}`, () => {
    let server: TestServer;
    let drop: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      const db = await databaseUrl();
      drop = db.drop;
      server = await startTestServer(db.url ? { DATABASE_URL: db.url } : {}, {
        extra: { catalogue: testCatalogue(["fixed", "broken"]), providers: [new FixedPcmProvider("fixed", 1), new BrokenProvider("broken", "fail-before-audio")] },
      });
    });
    afterAll(async () => {
      await server.stop(0);
      await drop?.();
    });

    /** A tenant with `credits` (10 a character on the test model) and its key. */
    async function account(credits: number) {
      const { key, tenantId } = await createKey(server.ctx.database, `outcomes-${crypto.randomUUID()}`);
      await server.ctx.meter.ledger.credit(tenantId, { credits, type: "adjustment", description: "test" });
      return { key, tenantId };
    }

    const session = (key: string, provider = "fixed") => connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&provider=${provider}`), bearer(key));

    /** Sends text and a flush, and waits for its audio: the session is serving. */
    async function serving(c: Client) {
      c.send({ type: "text", text: "hello there" });
      c.send({ type: "flush" });
      for (let i = 0; i < 500 && !c.rec.audio.length; i++) await Bun.sleep(10);
      expect(c.rec.audio.length).toBeGreaterThan(0);
    }

    /** The tenant's activity items once there are `count`. */
    async function activity(key: string, count: number) {
      let items: { status: string; outcome: string; usage_amount: number }[] = [];
      for (let i = 0; i < 250 && items.length < count; i++, await Bun.sleep(20)) {
        items = ((await (await fetch(`${server.url}/account/activity`, { headers: bearer(key) })).json()) as { items: typeof items }).items;
      }
      expect(items).toHaveLength(count);
      return items;
    }

    test("completed, cut_off, client_left, failed and shutdown: each session's record says how it ended", async () => {
      const completed = await account(1_000_000);
      const c = session(completed.key);
      c.send({ type: "text", text: "all of it" });
      c.send({ type: "close" });
      expect((await c.closed).close.code).toBe(1000);
      expect(await activity(completed.key, 1)).toMatchObject([{ status: "completed", outcome: "completed" }]);

      // 200 credits hold 19 characters, not 100.
      const poor = await account(200);
      const cut = session(poor.key);
      cut.send({ type: "text", text: "x".repeat(100) });
      cut.send({ type: "close" });
      expect((await cut.closed).close.code).toBe(4402);
      expect(await activity(poor.key, 1)).toMatchObject([{ status: "failed", outcome: "cut_off", usage_amount: 0 }]);

      const leaving = await account(1_000_000);
      const left = session(leaving.key);
      await serving(left);
      left.ws.close();
      expect(await activity(leaving.key, 1)).toMatchObject([{ outcome: "client_left" }]);

      const unlucky = await account(1_000_000);
      const broken = session(unlucky.key, "broken");
      broken.send({ type: "text", text: "never spoken" });
      broken.send({ type: "close" });
      await broken.closed;
      expect(await activity(unlucky.key, 1)).toMatchObject([{ status: "failed", outcome: "failed", usage_amount: 0 }]);

      const stopping = await account(1_000_000);
      const drained = session(stopping.key);
      await serving(drained);
      // What a stopping server does once its grace period is over.
      await server.ctx.sessions.drain(0);
      expect((await drained.closed).close.code).toBe(1001);
      expect(await activity(stopping.key, 1)).toMatchObject([{ outcome: "shutdown" }]);
    });

    test("a record written before outcomes were kept answers the outcome its status tells", async () => {
      const old = await account(1_000_000);
      const now = new Date();
      const insert =
        "INSERT INTO activity (id, tenant_id, key_id, surface, started_at, finished_at, latency_ms, provider, model, capability, status, usage_unit, usage_amount, credits, attempts) VALUES (?, ?, NULL, 'native', ?, ?, 0, 'fixed', ?, 'tts', ?, 'characters', 0, 0, '[]')";
      for (const [i, status] of ["completed", "failed", "interrupted"].entries()) {
        await server.ctx.database.sql.query(insert, [`old_${crypto.randomUUID()}`, old.tenantId, new Date(now.getTime() - i * 1000), now, TEST_MODEL, status]);
      }
      const items = await activity(old.key, 3);
      expect(items.map((r) => [r.status, r.outcome])).toEqual([
        ["completed", "completed"],
        ["failed", "failed"],
        ["interrupted", "shutdown"],
      ]);
    });
  });
}

suite("SQLite", async () => ({}), false);
suite("PostgreSQL", freshPostgres, !postgresAvailable);
