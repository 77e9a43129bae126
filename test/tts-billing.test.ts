import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { desc, eq } from "drizzle-orm";
import { createKey } from "./helpers/accounts.ts";
import { BrokenProvider, FixedPcmProvider, TEST_MODEL, UNPRICED_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// /v1/tts and the meter: admission before the upgrade, one activity record per session, and a
// balance that runs out mid-session. TEST_MODEL costs 10 credits per character.

let server: TestServer;
const fixed = new FixedPcmProvider("fixed", 2);
const refusing = new BrokenProvider("refusing", "refuse");
beforeAll(async () => {
  server = await startTestServer(
    {},
    { extra: { catalogue: testCatalogue(["refusing", "fixed", "ending"]), providers: [fixed, refusing, new BrokenProvider("ending", "end-early"), new FixedPcmProvider("unpriced")] } },
  );
});
afterAll(() => server.stop(0));

async function account(paidCredits: number) {
  const { key, tenantId } = await createKey(server.ctx.database, `billing-${crypto.randomUUID()}`);
  if (paidCredits) await server.ctx.meter.ledger.credit(tenantId, { credits: paidCredits, type: "adjustment", description: "test" });
  return { key, tenantId };
}

async function activityOf(tenantId: string) {
  const { db, schema } = server.ctx.database;
  return db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId)).orderBy(desc(schema.activity.startedAt));
}

const paidOf = async (tenantId: string) => (await server.ctx.meter.ledger.snapshot(tenantId)).balance;

async function upgrade(query: string, key: string) {
  const res = await fetch(`${server.url}/v1/tts?${query}`, {
    headers: { Authorization: `Bearer ${key}`, Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
  });
  return { status: res.status, body: await res.json() };
}

describe("admission before any upstream work", () => {
  test("an account that cannot pay gets HTTP 402 insufficient_balance before the upgrade", async () => {
    const { key } = await account(0);
    const opened = fixed.opened;
    expect(await upgrade(`model=${TEST_MODEL}`, key)).toEqual({ status: 402, body: expect.objectContaining({ error: "insufficient_balance" }) });
    expect(fixed.opened).toBe(opened);
  });

  test("an unpriced model gets HTTP 422 model_not_priced before the upgrade", async () => {
    const { key } = await account(1_000_000);
    expect(await upgrade(`model=${UNPRICED_MODEL}`, key)).toMatchObject({ status: 422, body: { error: "model_not_priced" } });
  });

  test("auth still comes first: a bad key is told 4401 after the upgrade, whatever the balance", async () => {
    const rec = await connect(server.wsUrl(`/v1/tts?model=${UNPRICED_MODEL}`), bearer("vxr_nope")).closed;
    expect(rec.close.code).toBe(4401);
  });
});

describe("usage", () => {
  test("a completed session leaves one activity record and its exact debit", async () => {
    const { key, tenantId } = await account(1_000_000);
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
    c.send({ type: "text", text: "Twelve chars" });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    // The record is written before the final event: it is there the moment the socket closes.
    const [record, ...more] = await activityOf(tenantId);
    expect(more).toEqual([]);
    expect(record).toMatchObject({ provider: "fixed", model: TEST_MODEL, capability: "tts", status: "completed", usageUnit: "characters", usageAmount: 12, credits: 120, surface: "native" });
    expect(record.finishedAt.getTime()).toBeGreaterThanOrEqual(record.startedAt.getTime());
    expect((await paidOf(tenantId)).paidCredits).toBe(1_000_000 - 120);
    expect((await paidOf(tenantId)).paidHeld).toBe(0);
  });

  test("a failed attempt before the serving provider is recorded on the activity", async () => {
    const { key, tenantId } = await account(1_000_000);
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&provider_order=refusing,fixed`), bearer(key));
    c.send({ type: "text", text: "abc" });
    c.send({ type: "close" });
    await c.closed;
    const [record] = await activityOf(tenantId);
    expect(record.provider).toBe("fixed");
    expect(JSON.parse(record.attempts)).toEqual([{ provider: "refusing", reason: "connection refused" }]);
  });

  test("a session whose provider fails is recorded as failed and billed nothing it did not deliver", async () => {
    const { key, tenantId } = await account(1_000_000);
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&provider=refusing`), bearer(key));
    c.send({ type: "text", text: "never spoken" });
    c.send({ type: "close" });
    expect((await c.closed).close.code).toBe(1011);
    const [record] = await activityOf(tenantId);
    expect(record).toMatchObject({ status: "failed", provider: "refusing", usageAmount: 0, credits: 0 });
    expect((await paidOf(tenantId)).paidCredits).toBe(1_000_000);
    expect((await paidOf(tenantId)).paidHeld).toBe(0);
  });

  /** A session that got audio for its first, flushed text and then had more text written. */
  async function spokenThenMore(key: string) {
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&provider=fixed`), bearer(key));
    c.send({ type: "text", text: "Twelve chars" });
    c.send({ type: "flush" });
    for (let i = 0; i < 100 && !c.rec.events.some((e) => e.type === "service.tts_flushed"); i++) await Bun.sleep(10);
    c.send({ type: "text", text: "more text!" });
    await Bun.sleep(50);
    return c;
  }

  test("a client that leaves after audio began pays for all the text the provider was given, flushed or not", async () => {
    const { key, tenantId } = await account(1_000_000);
    const c = await spokenThenMore(key);
    c.ws.close();
    await c.closed;
    for (let i = 0; i < 50 && !(await activityOf(tenantId)).length; i++) await Bun.sleep(20);
    expect((await activityOf(tenantId))[0]).toMatchObject({ status: "failed", usageAmount: 22, credits: 220 });
  });

  test("a client that breaks the frame rules after audio began pays the same: a bad frame is no way out of the bill", async () => {
    const { key, tenantId } = await account(1_000_000);
    const c = await spokenThenMore(key);
    c.ws.send("not json");
    expect((await c.closed).close.code).toBe(1003);
    expect((await activityOf(tenantId))[0]).toMatchObject({ status: "failed", usageAmount: 22, credits: 220 });
  });

  test("a provider that ends its stream while the session is still open is a failure (1011), not a completed session", async () => {
    const { key, tenantId } = await account(1_000_000);
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&provider=ending`), bearer(key));
    c.send({ type: "text", text: "Twelve chars" });
    c.send({ type: "flush" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.some((e) => e.type === "service.tts_session_ended")).toBe(false);
    expect((await activityOf(tenantId))[0]).toMatchObject({ status: "failed", provider: "ending", usageAmount: 0 });
  });

  test("a balance that runs out mid-session: admitted text is spoken, then 4402 insufficient_balance", async () => {
    const { key, tenantId } = await account(505); // 50 characters and the carry allowance, no more
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
    c.send({ type: "text", text: "x".repeat(30) });
    c.send({ type: "flush" });
    c.send({ type: "text", text: "y".repeat(30) }); // would need 600 credits in all
    c.send({ type: "text", text: "never admitted" });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "insufficient_balance" }) });
    expect(rec.audio.length).toBe(2); // the first 30 characters were spoken
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", code: "insufficient_balance" });
    const [record] = await activityOf(tenantId);
    expect(record).toMatchObject({ status: "completed", usageAmount: 30, credits: 300 });
    const bal = await paidOf(tenantId);
    expect(bal.paidCredits).toBe(205);
    expect(bal.paidHeld).toBe(0);
  });

  test("a balance that cannot cover even the first text: nothing spoken, 4402, recorded failed and unbilled", async () => {
    const { key, tenantId } = await account(50); // admitted (one character's worth), but not for 30
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
    c.send({ type: "text", text: "x".repeat(30) });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "insufficient_balance" }) });
    expect(rec.audio.length).toBe(0);
    expect(await activityOf(tenantId)).toMatchObject([{ status: "failed", usageAmount: 0, credits: 0 }]);
    expect(await paidOf(tenantId)).toMatchObject({ paidCredits: 50, paidHeld: 0 });
  });
});
