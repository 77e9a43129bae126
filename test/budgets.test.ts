import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElevenLabsError } from "@elevenlabs/elevenlabs-js";
import { desc, eq } from "drizzle-orm";
import OpenAI from "openai";
import { writeLimits } from "../src/limits/limit-values.ts";
import type { Limits } from "../src/limits/types.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { createKey } from "./helpers/accounts.ts";
import { answerCountingOpenAiSdk, elevenLabsSdk } from "./helpers/sdk-clients.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// Key and tenant budgets (docs/limits.md#budgets): refused before any upgrade, hold or provider
// call with 429 budget_exceeded and `x-should-retry: false` in each surface's envelope; a session
// that reaches its key's budget mid-way ends 4402, its delivered usage billed. TEST_MODEL costs
// 10 credits (0.00001 USD) per character. The access-check interval is long here: what the
// budgets see of this instance's own spend must come from its settles, not from a re-read.

let server: TestServer;
const fixed = new FixedPcmProvider("fixed", 2);
beforeAll(async () => {
  server = await startTestServer({ ACCESS_CHECK_INTERVAL_MS: "600000" }, { extra: { catalogue: testCatalogue(["fixed"]), providers: [fixed] } });
});
afterAll(() => server.stop(0));

/** A rich account whose key has `key` limits (and its tenant `tenant`'s). */
async function budgeted(key: Limits, tenant: Limits = {}) {
  const made = await createKey(server.ctx.database, `budget-${crypto.randomUUID()}`);
  await server.ctx.meter.ledger.credit(made.tenantId, { credits: 10_000_000, type: "adjustment", description: "test" });
  await writeLimits(server.ctx.database.sql, made.tenantId, undefined, tenant);
  await writeLimits(server.ctx.database.sql, made.tenantId, made.keyId, key);
  return made;
}

const activityOf = async (tenantId: string) => {
  const { db, schema } = server.ctx.database;
  return db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId)).orderBy(desc(schema.activity.startedAt));
};

async function upgrade(key: string) {
  const res = await fetch(`${server.url}/v1/tts?model=${TEST_MODEL}`, {
    headers: { Authorization: `Bearer ${key}`, Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
  });
  return { status: res.status, retry: res.headers.get("x-should-retry"), body: await res.json() };
}

/** A /v1/tts session speaking `chars` characters: how it closed. */
async function speak(key: string, chars: number) {
  const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
  c.send({ type: "text", text: "x".repeat(chars) });
  c.send({ type: "close" });
  return c.closed;
}

describe("over budget: refused before any upgrade, hold or provider call", () => {
  test("native: a WebSocket upgrade is answered HTTP 429 {error: budget_exceeded} with x-should-retry: false, no provider opened", async () => {
    const { key } = await budgeted({ usd_per_day: 0 });
    const opened = fixed.opened;
    expect(await upgrade(key)).toEqual({ status: 429, retry: "false", body: expect.objectContaining({ error: "budget_exceeded" }) });
    expect(fixed.opened).toBe(opened);
  });

  test("/oai: the OpenAI SDK gets a RateLimitError it does not retry (one request, x-should-retry: false)", async () => {
    const { key } = await budgeted({ usd_per_month: 0 });
    const { sdk, seen } = answerCountingOpenAiSdk(server, key);
    const err = await sdk.audio.speech.create({ model: TEST_MODEL, voice: "any", input: "x", response_format: "pcm" }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err).toMatchObject({ status: 429, code: "budget_exceeded", type: "rate_limit_error" });
    expect(seen.length).toBe(1);
    expect(seen[0]!.headers.get("x-should-retry")).toBe("false");
  });

  test("/el: the ElevenLabs SDK gets a 429 whose detail says budget_exceeded", async () => {
    const { key } = await budgeted({}, { usd_per_day: 0 }); // the tenant's budget, the key has none of its own
    const res = await fetch(`${server.url}/el/v1/text-to-speech/any/stream?output_format=pcm_16000`, {
      method: "POST",
      headers: { "xi-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ text: "x", model_id: TEST_MODEL }),
    });
    expect(res.headers.get("x-should-retry")).toBe("false");
    const err = await (async () => {
      const stream = await elevenLabsSdk(server, key).textToSpeech.stream("any", { text: "x", modelId: TEST_MODEL, outputFormat: "pcm_16000" });
      for await (const _ of stream);
    })().catch((e) => e);
    expect(err).toBeInstanceOf(ElevenLabsError);
    expect(err).toMatchObject({ statusCode: 429, body: { detail: { status: "budget_exceeded", message: expect.stringContaining("per day") } } });
  });

  test("/v1/realtime opened with a client secret: the budget of the key that minted it applies, HTTP 429 before the upgrade", async () => {
    const { key, keyId, tenantId } = await budgeted({});
    const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: "POST", headers: { ...bearer(key), "content-type": "application/json" }, body: JSON.stringify(body) });
    const pipeline = { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url: "wss://app.example/voice" } };
    const { id: profileId } = (await (await post("/v1/realtime/profiles", { name: "line", pipeline })).json()) as { id: string };
    const { client_secret } = (await (await post("/v1/realtime/client-secrets", { profile_id: profileId })).json()) as { client_secret: string };
    await writeLimits(server.ctx.database.sql, tenantId, keyId, { usd_per_month: 0 });
    const res = await fetch(`${server.url}/v1/realtime?client_secret=${client_secret}`, {
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: "budget_exceeded" });
  });
});

describe("spend against the budget", () => {
  test("a session reaching its key's budget mid-way: admitted text spoken, 4402 budget_exceeded, delivered usage billed exactly", async () => {
    const { key, tenantId } = await budgeted({ usd_per_day: 0.000505 }); // 50 characters and the carry allowance
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
    c.send({ type: "text", text: "x".repeat(30) });
    c.send({ type: "flush" });
    c.send({ type: "text", text: "y".repeat(30) }); // 600 credits in all: over the budget
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "budget_exceeded" }) });
    expect(rec.audio.length).toBe(2); // the first 30 characters were spoken
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", code: "budget_exceeded" });
    expect(await activityOf(tenantId)).toMatchObject([{ status: "completed", usageAmount: 30, credits: 300 }]);
    const { balance } = await server.ctx.meter.ledger.snapshot(tenantId);
    expect(balance).toMatchObject({ paidCredits: 10_000_000 - 300, paidHeld: 0 });
  });

  test("a file whose whole duration the budget cannot hold is refused 429 budget_exceeded, unbilled", async () => {
    // pocketsphinx: 10 credits a second; the 2.7 s recording needs 31, the budget leaves 20.
    const { key, tenantId } = await budgeted({ usd_per_day: 0.00002 });
    const res = await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "audio/wav" },
      body: await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer(),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(await res.json()).toMatchObject({ error: "budget_exceeded" });
    expect((await activityOf(tenantId)).reduce((n, a) => n + a.credits, 0)).toBe(0);
  });

  test("this instance's own settles count at once: the next session is refused before the spend is read again", async () => {
    const { key, tenantId } = await budgeted({ usd_per_day: 0.000301 }); // 30 characters and the carry allowance
    expect((await speak(key, 30)).close.code).toBe(1000);
    expect(await activityOf(tenantId)).toMatchObject([{ credits: 300 }]);
    expect(await upgrade(key)).toMatchObject({ status: 429, body: { error: "budget_exceeded" } });
  });

  test("what the key spent before its budget was set is read from the ledger; the account's monthly budget counts every key", async () => {
    const first = await budgeted({});
    expect((await speak(first.key, 40)).close.code).toBe(1000);
    const other = await createKey(server.ctx.database, (await server.ctx.database.sql.query<{ name: string }>("SELECT name FROM tenants WHERE id = ?", [first.tenantId]))[0]!.name);
    await writeLimits(server.ctx.database.sql, first.tenantId, undefined, { usd_per_month: 0.0004 }); // what the first key spent
    server.ctx.keys.forgetTenant(first.tenantId);
    expect(await upgrade(other.key)).toMatchObject({ status: 429, body: { error: "budget_exceeded", message: expect.stringContaining("per month") } });
    await writeLimits(server.ctx.database.sql, first.tenantId, undefined, { usd_per_month: null });
    server.ctx.keys.forgetTenant(first.tenantId);
    expect((await speak(other.key, 5)).close.code).toBe(1000);
  });
});
