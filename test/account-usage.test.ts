import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createKey } from "./helpers/accounts.ts";
import { mintKey } from "../src/accounts/keys.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// Balance, activity, daily usage and transactions over HTTP, on SQLite and on PostgreSQL.

function suite(name: string, databaseUrl: () => Promise<{ url?: string; drop?: () => Promise<void> }>, skip: boolean) {
  describe.skipIf(skip)(`account endpoints on ${name}`, () => {
    let server: TestServer;
    let drop: (() => Promise<void>) | undefined;
    let key: string;
    let tenantId: string;

    beforeAll(async () => {
      const db = await databaseUrl();
      drop = db.drop;
      server = await startTestServer(db.url ? { DATABASE_URL: db.url } : {}, {
        extra: { catalogue: testCatalogue(["fixed", "other"]), providers: [new FixedPcmProvider("fixed", 1), new FixedPcmProvider("other", 1)] },
      });
      ({ key, tenantId } = await createKey(server.ctx.database, `acct-${crypto.randomUUID()}`));
      const ledger = server.ctx.meter.ledger;
      await ledger.credit(tenantId, { credits: 2_000_000, type: "top_up", description: "top-up of 2 USD", externalId: "pay_secret_reference" });
      await ledger.credit(tenantId, {
        credits: 500,
        type: "grant",
        description: "grant",
        grant: { name: "welcome", expiresAt: new Date(Date.now() + 86_400_000), targets: [{ provider: "other", model: TEST_MODEL }] },
      });
      await ledger.credit(tenantId, { credits: 700, type: "grant", description: "old grant", grant: { name: "lapsed", expiresAt: new Date(Date.now() - 1000), targets: [] } });
      // Five sessions: three on "fixed" (10 chars each), two on "other" (5 chars each, paid by the grant).
      for (const [provider, text] of [
        ["fixed", "0123456789"],
        ["other", "abcde"],
        ["fixed", "0123456789"],
        ["other", "abcde"],
        ["fixed", "0123456789"],
      ]) {
        const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&provider=${provider}`), bearer(key));
        c.send({ type: "text", text });
        c.send({ type: "close" });
        await c.closed;
      }
    });
    afterAll(async () => {
      await server.stop(0);
      await drop?.();
    });

    const get = async (path: string, k = key) => {
      const res = await fetch(`${server.url}${path}`, { headers: bearer(k) });
      return { status: res.status, body: (await res.json()) as any };
    };

    test("balance: paid, spendable, promotional credits and each grant", async () => {
      const { status, body } = await get("/account/balance");
      expect(status).toBe(200);
      expect(body).toMatchObject({ state: "ok", paid_credits: 2_000_000 - 300, spendable_paid_credits: 2_000_000 - 300, promotional_credits: 400, paid_balance_usd: 1.9997 });
      expect(Date.parse(body.updated_at)).toBeGreaterThan(0);
      const byName = Object.fromEntries(body.promotion_grants.map((g: any) => [g.name, g]));
      expect(byName.welcome).toMatchObject({ remaining_credits: 400, remaining_usd: 0.0004, eligible: true, targets: [{ provider: "other", model: TEST_MODEL }] });
      expect(byName.lapsed).toMatchObject({ remaining_credits: 700, eligible: false });
      expect(Date.parse(byName.welcome.expires_at)).toBeGreaterThan(Date.now());
    });

    test("balance is callable at zero: state exhausted", async () => {
      const { key: broke } = await createKey(server.ctx.database, `broke-${crypto.randomUUID()}`);
      const { status, body } = await get("/account/balance", broke);
      expect(status).toBe(200);
      expect(body).toMatchObject({ state: "exhausted", paid_credits: 0, spendable_paid_credits: 0, promotional_credits: 0, promotion_grants: [] });
    });

    test("balance needs a key", async () => {
      const res = await fetch(`${server.url}/account/balance`);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "missing_api_key" });
    });

    test("activity: newest first, every field, filters, and pagination with next_cursor", async () => {
      const all = await get("/account/activity");
      expect(all.status).toBe(200);
      expect(all.body.items.length).toBe(5);
      expect(all.body.next_cursor).toBeNull();
      const first = all.body.items[0];
      expect(Object.keys(first).sort()).toEqual(
        ["attempts", "capability", "cost_usd", "credits", "finished_at", "id", "latency_ms", "model", "outcome", "provider", "started_at", "status", "usage_amount", "usage_unit"].sort(),
      );
      expect(first).toMatchObject({
        provider: "fixed",
        model: TEST_MODEL,
        capability: "tts",
        status: "completed",
        outcome: "completed",
        usage_unit: "characters",
        usage_amount: 10,
        credits: 100,
        cost_usd: 0.0001,
      });
      const starts = all.body.items.map((i: any) => Date.parse(i.started_at));
      expect([...starts].sort((a, b) => b - a)).toEqual(starts);

      expect((await get("/account/activity?provider=other")).body.items.map((i: any) => i.usage_amount)).toEqual([5, 5]);
      expect((await get("/account/activity?status=failed")).body.items).toEqual([]);
      expect((await get(`/account/activity?model=${encodeURIComponent(TEST_MODEL)}&capability=tts`)).body.items.length).toBe(5);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: { items: { id: string }[]; next_cursor: string | null } } = await get(`/account/activity?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
        expect(page.body.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.items.map((i) => i.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen).toEqual(all.body.items.map((i: any) => i.id));
    });

    test("activity time range: inclusive bounds, 30-day default, at most 90 days", async () => {
      const future = new Date(Date.now() + 3_600_000).toISOString();
      expect((await get(`/account/activity?start_time=${future}&end_time=${future}`)).body.items).toEqual([]);
      const past = new Date(Date.now() - 86_400_000).toISOString();
      expect((await get(`/account/activity?start_time=${past}`)).body.items.length).toBe(5);
    });

    test("every bad activity parameter is 400 invalid_request naming it", async () => {
      const now = Date.now();
      const iso = (ms: number) => new Date(ms).toISOString();
      const cases: [string, string][] = [
        ["start_time=yesterday", "start_time"],
        ["end_time=2026-13-01T00:00:00Z", "end_time"],
        [`start_time=${iso(now)}&end_time=${iso(now - 1000)}`, "start_time"],
        [`start_time=${iso(now - 91 * 86_400_000)}&end_time=${iso(now)}`, "start_time"],
        ["provider=", "provider"],
        [`model=${"m".repeat(201)}`, "model"],
        ["capability=video", "capability"],
        ["status=ok", "status"],
        ["limit=0", "limit"],
        ["limit=101", "limit"],
        ["limit=ten", "limit"],
        ["cursor=", "cursor"],
        [`cursor=${"c".repeat(513)}`, "cursor"],
        ["cursor=not-ours", "cursor"],
        ["limit=5&limit=6", "limit"],
        ["colour=blue", "colour"],
      ];
      for (const [query, param] of cases) {
        const { status, body } = await get(`/account/activity?${query}`);
        expect({ query, status, error: body.error, param: body.param }).toEqual({ query, status: 400, error: "invalid_request", param });
      }
    });

    test("daily usage per API key", async () => {
      const { key: second, keyId } = await mintKey(server.ctx.database, tenantId);
      const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&provider=fixed`), bearer(second));
      c.send({ type: "text", text: "xyz" });
      c.send({ type: "close" });
      await c.closed;
      const { status, body } = await get("/account/usage");
      expect(status).toBe(200);
      const today = new Date().toISOString().slice(0, 10);
      expect(body.end_date).toBe(today);
      const rows = body.items.filter((r: any) => r.date === today);
      const byKey = Object.fromEntries(rows.map((r: any) => [r.api_key.id, r]));
      expect(byKey[keyId]).toMatchObject({ requests: 1, failed: 0, characters: 3, seconds: 0, credits: 30, cost_usd: 0.00003, api_key: { prefix: second.slice(0, 12) } });
      const first = rows.find((r: any) => r.api_key.id !== keyId);
      expect(first).toMatchObject({ requests: 5, characters: 40, credits: 400 });
      expect((await get("/account/usage?start_date=2026-02-30")).status).toBe(400);
      expect((await get("/account/usage?start_date=2020-01-01&end_date=2020-12-31")).status).toBe(400);
    });

    test("credit transactions: grants, top-ups and adjustments, without payment references", async () => {
      const { status, body } = await get("/account/transactions");
      expect(status).toBe(200);
      expect(body.items.map((t: any) => t.type).sort()).toEqual(["grant", "grant", "top_up"]);
      const topUp = body.items.find((t: any) => t.type === "top_up");
      expect(topUp).toMatchObject({ credits: 2_000_000, amount_usd: 2, description: "top-up of 2 USD" });
      expect(JSON.stringify(body)).not.toContain("pay_secret_reference");
      const page = await get("/account/transactions?limit=1");
      expect(page.body.items.length).toBe(1);
      expect(typeof page.body.next_cursor).toBe("string");
      expect((await get(`/account/transactions?limit=1&cursor=${page.body.next_cursor}`)).body.items[0].id).not.toBe(page.body.items[0].id);
    });
  });
}

suite("SQLite", async () => ({}), false);
suite("PostgreSQL", freshPostgres, !postgresAvailable);
