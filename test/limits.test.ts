import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElevenLabsError } from "@elevenlabs/elevenlabs-js";
import OpenAI, { toFile } from "openai";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { createKey } from "./helpers/accounts.ts";
import { setKeyLimits, setTenantLimits } from "./helpers/limits.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { silence, wavFile } from "./helpers/speech.ts";
import { upgradeRequest } from "./helpers/upgrade-request.ts";
import { bearer, connect } from "./helpers/ws-client.ts";
import type { Limits } from "../src/limits/types.ts";

// max_sessions and requests_per_minute on one instance (counted in its memory, no REDIS_URL), on
// every surface, through the official SDKs where there is one: refused before any upgrade, hold or
// provider call with 429 and Retry-After in the surface's envelope (docs/limits.md).

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({}, { extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed")] } });
});
afterAll(() => server.stop(0));

/** A new funded tenant with one key, its limits and its key's written before the key is first used. */
async function limitedKey(tenant: Limits, key: Limits = {}) {
  const made = await createKey(server.ctx.database, `limits-${crypto.randomUUID()}`);
  await server.ctx.meter.ledger.credit(made.tenantId, { credits: 10_000_000, type: "adjustment", description: "test" });
  await setTenantLimits(server.ctx.database, made.tenantId, tenant);
  await setKeyLimits(server.ctx.database, made.keyId, key);
  return made;
}

const ttsUrl = () => server.wsUrl(`/v1/tts?model=${encodeURIComponent(TEST_MODEL)}`);

/** A /v1/tts socket held open (a session in flight). */
async function heldSession(key: string) {
  const client = connect(ttsUrl(), bearer(key));
  await client.opened;
  return client;
}

const json = (answer: { body: Uint8Array }) => JSON.parse(new TextDecoder().decode(answer.body));

describe("max_sessions", () => {
  test("a WebSocket over its key's limit is answered 429 concurrency_limited before the upgrade, with Retry-After; one closing frees its place", async () => {
    const { key } = await limitedKey({}, { max_sessions: 2 });
    const held = [await heldSession(key), await heldSession(key)];
    const refused = await upgradeRequest(ttsUrl(), bearer(key));
    expect(refused.status).toBe(429);
    expect(json(refused)).toMatchObject({ error: "concurrency_limited", limit_scope: "key" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    held[0]!.ws.close();
    await held[0]!.closed;
    expect((await upgradeRequest(ttsUrl(), bearer(key))).status).toBe(101);
    held[1]!.ws.close();
  });

  test("the tenant's limit counts every key of the tenant", async () => {
    const first = await limitedKey({ max_sessions: 1 });
    const second = await createKey(server.ctx.database, (await server.ctx.keys.authenticate(first.key)).tenantName);
    const held = await heldSession(first.key);
    const refused = await upgradeRequest(ttsUrl(), bearer(second.key));
    expect(refused.status).toBe(429);
    expect(json(refused)).toMatchObject({ error: "concurrency_limited", limit_scope: "tenant" });
    held.ws.close();
  });

  test("/oai: a streamed speech answer over the limit is the OpenAI SDK's RateLimitError (code concurrency_limited, Retry-After)", async () => {
    const { key } = await limitedKey({ max_sessions: 1 });
    const held = await heldSession(key);
    const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/oai`, maxRetries: 0 });
    const refused = await client.audio.speech.create({ model: "flite", voice: "slt", input: "Hello." }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    const err = refused as InstanceType<typeof OpenAI.RateLimitError>;
    expect(err.code).toBe("concurrency_limited");
    expect(err.headers.get("retry-after")).toBe("1");
    expect(err.headers.get("x-should-retry")).toBeNull();
    held.ws.close();
    await held.closed;
    expect((await (await client.audio.speech.create({ model: "flite", voice: "slt", input: "Hello." })).arrayBuffer()).byteLength).toBeGreaterThan(1000);
  });

  test("/oai: a streamed transcription over the limit is refused before its file is measured or held for", async () => {
    const { key } = await limitedKey({}, { max_sessions: 1 });
    const held = await heldSession(key);
    const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/oai`, maxRetries: 0 });
    const file = await toFile(wavFile(silence(500)), "quiet.wav", { type: "audio/wav" });
    const refused = await client.audio.transcriptions.create({ file, model: "pocketsphinx", stream: true }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    expect((refused as InstanceType<typeof OpenAI.RateLimitError>).code).toBe("concurrency_limited");
    held.ws.close();
  });

  test("/el: text-to-speech over the limit is ElevenLabs' 429 too_many_concurrent_requests, as its SDK raises it", async () => {
    const { ElevenLabsClient } = await import("@elevenlabs/elevenlabs-js");
    const { key } = await limitedKey({}, { max_sessions: 1 });
    const held = await heldSession(key);
    const client = new ElevenLabsClient({ apiKey: key, baseUrl: `${server.url}/el`, maxRetries: 0 });
    const refused = await client.textToSpeech.convert("slt", { text: "Hello.", modelId: "flite" }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ElevenLabsError);
    expect((refused as ElevenLabsError).statusCode).toBe(429);
    expect((refused as ElevenLabsError).body).toMatchObject({ detail: { status: "too_many_concurrent_requests" } });
    held.ws.close();
  });

  test("/el stream-input keyed in its init frame: a socket closed while that key is admitted holds no session afterwards", async () => {
    // The window shows when the late key's admission happened: only then is the count of sessions final.
    const { key, keyId } = await limitedKey({}, { max_sessions: 1, requests_per_minute: 100 });
    const client = connect(server.wsUrl("/el/v1/text-to-speech/slt/stream-input?model_id=flite"));
    await client.opened;
    client.ws.send(JSON.stringify({ text: " ", xi_api_key: key }));
    client.ws.send(JSON.stringify({ text: "Hello there. ", flush: true }));
    client.ws.close();
    await client.closed;
    let use = await server.ctx.limits.key(keyId);
    for (let i = 0; i < 50 && use.requests_last_minute === 0; i++) {
      await Bun.sleep(100);
      use = await server.ctx.limits.key(keyId);
    }
    expect(use.requests_last_minute).toBe(1);
    expect(use.sessions).toBe(0);
  });
});

describe("requests_per_minute", () => {
  test("native: past the tenant's requests in the window, 429 rate_limited with Retry-After", async () => {
    const { key } = await limitedKey({ requests_per_minute: 3 });
    for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/account/balance`, { headers: bearer(key) })).status).toBe(200);
    const refused = await fetch(`${server.url}/account/balance`, { headers: bearer(key) });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: "rate_limited", limit_scope: "tenant" });
    // One token every 20 s.
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(1);
    expect(refused.headers.get("x-should-retry")).toBeNull();
  });

  test("a session open draws on the window too: the upgrade past it is refused before the upgrade", async () => {
    const { key } = await limitedKey({}, { requests_per_minute: 1 });
    const held = await heldSession(key);
    const refused = await upgradeRequest(ttsUrl(), bearer(key));
    expect(refused.status).toBe(429);
    expect(json(refused)).toMatchObject({ error: "rate_limited", limit_scope: "key" });
    held.ws.close();
  });

  test("/oai: the OpenAI SDK waits Retry-After and retries, and the retry passes", async () => {
    // 60 a minute: one token a second, so the refusal says 1000 ms.
    const { key } = await limitedKey({ requests_per_minute: 60 });
    for (let i = 0; i < 60; i++) await fetch(`${server.url}/oai/models`, { headers: bearer(key) });
    const answers: number[] = [];
    const counting: typeof fetch = Object.assign(async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      answers.push(response.status);
      return response;
    }, fetch);
    const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/oai`, maxRetries: 2, fetch: counting });
    const models = await client.models.list();
    expect(models.data.length).toBeGreaterThan(0);
    expect(answers).toEqual([429, 200]);
  });

  test("/el: ElevenLabs' 429 rate_limit_exceeded", async () => {
    const { ElevenLabsClient } = await import("@elevenlabs/elevenlabs-js");
    const { key } = await limitedKey({}, { requests_per_minute: 1 });
    const client = new ElevenLabsClient({ apiKey: key, baseUrl: `${server.url}/el`, maxRetries: 0 });
    await client.models.list();
    const refused = await client.models.list().catch((err: unknown) => err);
    expect((refused as ElevenLabsError).statusCode).toBe(429);
    expect((refused as ElevenLabsError).body).toMatchObject({ detail: { status: "rate_limit_exceeded" } });
  });
});

test("refusals are counted in /metrics by kind and scope", async () => {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  expect(text).toMatch(/voxroute_limit_refusals_total\{kind="concurrency",scope="key"\} [1-9]/);
  expect(text).toMatch(/voxroute_limit_refusals_total\{kind="rate",scope="tenant"\} [1-9]/);
});

test("every WebSocket surface refuses before its upgrade, in its envelope; another tenant without limits is upgraded", async () => {
  const { key } = await limitedKey({ max_sessions: 0 });
  const sockets: [string, Record<string, string>, (body: any) => unknown][] = [
    ["/v1/stt?model=pocketsphinx/en-us", bearer(key), (b) => b.error],
    ["/v1/realtime?profile_id=none", bearer(key), (b) => b.error],
    ["/oai/realtime?intent=transcription", bearer(key), (b) => b.error.code],
    ["/el/v1/text-to-speech/slt/stream-input?model_id=flite", { "xi-api-key": key }, (b) => b.detail.status],
    ["/el/v1/convai/conversation?agent_id=none", { "xi-api-key": key }, (b) => b.detail.status],
  ];
  for (const [path, headers, code] of sockets) {
    const refused = await upgradeRequest(server.wsUrl(path), headers);
    expect({ path, status: refused.status, code: code(json(refused)) }).toEqual({ path, status: 429, code: path.startsWith("/el") ? "too_many_concurrent_requests" : "concurrency_limited" });
  }
  const other = await limitedKey({});
  expect((await upgradeRequest(ttsUrl(), bearer(other.key))).status).toBe(101);
});
