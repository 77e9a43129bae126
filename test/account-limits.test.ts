import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeLimits } from "../src/limits/limit-values.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { createKey } from "./helpers/accounts.ts";
import { codeFor } from "./helpers/browser.ts";
import { tempDir } from "./helpers/temp-dirs.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// A tenant's own keys' limits (`POST /account/keys` takes usd_per_day, usd_per_month,
// max_sessions) and `GET /account/limits`: the account's and each live key's limits with spend
// today and this month, and live use when the counters run. TEST_MODEL costs 10 credits a character.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({}, { extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed", 1)] } });
});
afterAll(() => server.stop(0));

const call = async (method: string, path: string, key: string, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, { method, headers: { ...bearer(key), "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as any) };
};

async function account() {
  const made = await createKey(server.ctx.database, `limits-${crypto.randomUUID()}`);
  await server.ctx.meter.ledger.credit(made.tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
  return made;
}

describe("POST /account/keys with limits", () => {
  test("a key made with its own budget and session limit: answered and stored; its budget applies at once", async () => {
    const { key } = await account();
    const made = await call("POST", "/account/keys", key, { usd_per_day: 0.0002, usd_per_month: 3, max_sessions: 2 });
    expect(made).toMatchObject({ status: 201, body: { limits: { usd_per_day: 0.0002, usd_per_month: 3, max_sessions: 2 } } });
    const limits = (await call("GET", "/account/limits", key)).body;
    expect(limits.keys.find((k: any) => k.id === made.body.id)).toMatchObject({ prefix: made.body.key_prefix, limits: { usd_per_day: 0.0002, usd_per_month: 3, max_sessions: 2 } });
    // 20 credits of budget (and the carry allowance): 30 characters are over it.
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(made.body.api_key));
    c.send({ type: "text", text: "x".repeat(30) });
    c.send({ type: "close" });
    expect((await c.closed).close).toEqual({ code: 4402, reason: JSON.stringify({ error: "budget_exceeded" }) });
  });

  test("bad values are 400 naming the field; null is no limit; a key's limit above the account's is refused", async () => {
    const { key, tenantId } = await account();
    for (const [body, param] of [
      [{ usd_per_day: -1 }, "usd_per_day"],
      [{ usd_per_month: "5" }, "usd_per_month"],
      [{ usd_per_day: 0.0000001 }, "usd_per_day"],
      [{ max_sessions: 1.5 }, "max_sessions"],
      [{ requests_per_minute: 10 }, "requests_per_minute"], // the operator's to set
    ] as const) {
      expect(await call("POST", "/account/keys", key, body)).toMatchObject({ status: 400, body: { error: "invalid_request", param } });
    }
    expect(await call("POST", "/account/keys", key, [1])).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    expect(await call("POST", "/account/keys", key, { usd_per_day: null, max_sessions: 0 })).toMatchObject({ status: 201, body: { limits: { max_sessions: 0 } } });
    await writeLimits(server.ctx.database.sql, tenantId, undefined, { usd_per_month: 10 });
    expect(await call("POST", "/account/keys", key, { usd_per_month: 11 })).toMatchObject({ status: 400, body: { error: "invalid_request", param: "usd_per_month" } });
    expect((await call("POST", "/account/keys", key, { usd_per_month: 10 })).status).toBe(201);
  });

  test("a budget with a float's rounding noise (0.1 + 0.2) is stored to the credit, and is not above an account's budget of 0.3", async () => {
    const { key, tenantId } = await account();
    await writeLimits(server.ctx.database.sql, tenantId, undefined, { usd_per_day: 0.3 });
    const made = await call("POST", "/account/keys", key, { usd_per_day: 0.1 + 0.2 });
    expect(made).toMatchObject({ status: 201, body: { limits: { usd_per_day: 0.3 } } });
    const [stored] = await server.ctx.database.sql.query<{ limits: string }>("SELECT limits FROM api_keys WHERE id = ?", [made.body.id]);
    expect(JSON.parse(stored!.limits)).toEqual({ usd_per_day: 0.3 });
  });
});

describe("GET /account/limits", () => {
  test("the account's and each live key's limits with what they spent today and this month, from the ledger", async () => {
    const { key, keyId, tenantId } = await account();
    await writeLimits(server.ctx.database.sql, tenantId, undefined, { usd_per_month: 5, requests_per_minute: 100 });
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
    c.send({ type: "text", text: "x".repeat(25) });
    c.send({ type: "close" });
    expect((await c.closed).close.code).toBe(1000);
    const revoked = await call("POST", "/account/keys", key, {});
    expect((await call("DELETE", `/account/keys/${revoked.body.id}`, key)).status).toBe(204);
    const today = new Date().toISOString().slice(0, 10);
    expect(await call("GET", "/account/limits", key)).toEqual({
      status: 200,
      body: {
        day: today,
        month: today.slice(0, 7),
        // The session's open, the POST, the DELETE and this GET; the key has no limits of its own, so nothing counts for it.
        tenant: { limits: { usd_per_month: 5, requests_per_minute: 100 }, spent_today_usd: 0.00025, spent_this_month_usd: 0.00025, sessions: 0, requests_last_minute: 4 },
        keys: [{ id: keyId, prefix: key.slice(0, 12), limits: {}, spent_today_usd: 0.00025, spent_this_month_usd: 0.00025, sessions: 0, requests_last_minute: 0 }],
      },
    });
    expect(await call("GET", "/account/limits?x=1", key)).toMatchObject({ status: 400, body: { error: "invalid_request", param: "x" } });
  });

  test("the live counters show each holder's sessions and requests in the last minute", async () => {
    const { key, keyId, tenantId } = await account();
    await writeLimits(server.ctx.database.sql, tenantId, undefined, { max_sessions: 5, requests_per_minute: 100 });
    await writeLimits(server.ctx.database.sql, tenantId, keyId, { max_sessions: 3 });
    server.ctx.keys.forgetTenant(tenantId);
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
    await c.opened;
    try {
      const { body } = await call("GET", "/account/limits", key);
      expect(body.tenant).toMatchObject({ sessions: 1, requests_last_minute: 2 });
      expect(body.keys).toEqual([expect.objectContaining({ id: keyId, sessions: 1 })]);
    } finally {
      c.send({ type: "close" });
      await c.closed;
    }
  });
});

describe("the operator's defaults", () => {
  test("an account made by e-mail signup starts with DEFAULT_TENANT_* as its limits", async () => {
    const outbox = tempDir("voxroute-outbox-");
    const own = await startTestServer({ DEV_OUTBOX_DIR: outbox, DEFAULT_TENANT_USD_PER_MONTH: "20", DEFAULT_TENANT_REQUESTS_PER_MINUTE: "300" });
    try {
      const email = `defaults-${crypto.randomUUID().slice(0, 8)}@example.com`;
      const post = (path: string, body: unknown) => fetch(`${own.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      expect((await post("/account/agent-signup", { email })).status).toBe(200);
      const { api_key } = (await (await post("/account/agent-signup/verify", { email, code: await codeFor(outbox, email) })).json()) as { api_key: string };
      const limits = (await (await fetch(`${own.url}/account/limits`, { headers: bearer(api_key) })).json()) as any;
      expect(limits.tenant.limits).toEqual({ usd_per_month: 20, requests_per_minute: 300 });
      expect(limits.keys).toEqual([expect.objectContaining({ prefix: api_key.slice(0, 12), limits: {} })]);
    } finally {
      await own.stop(0);
    }
  });
});
