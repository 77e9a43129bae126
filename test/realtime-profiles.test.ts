import { afterAll, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { ElevenLabsClient } from "@elevenlabs/elevenlabs-js";
import { fundedAccount } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// Realtime profiles (/v1/realtime/profiles) and the same profiles as ElevenLabs Speech Engines
// (/el/v1/speech-engine), the engine read back with the official SDK.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

const PIPELINE = {
  stt: { model: "pocketsphinx", input: { audio_format: "pcm_16000" } },
  tts: { model: "flite", voice: "slt" },
  upstream: { url: "wss://app.example/voice", headers: { "x-app": "demo" } },
};
const post = (path: string, body: unknown, key = server.key, header = "authorization") =>
  fetch(`${server.url}${path}`, { method: "POST", headers: { [header]: header === "authorization" ? `Bearer ${key}` : key, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("/v1/realtime/profiles", () => {
  test("create, then read back; another tenant cannot see it", async () => {
    const res = await post("/v1/realtime/profiles", { name: "support line", pipeline: PIPELINE });
    expect(res.status).toBe(201);
    const profile = (await res.json()) as { id: string };
    expect(profile).toMatchObject({
      object: "realtime.profile",
      type: "pipeline",
      name: "support line",
      revision: 1,
      pipeline: { stt: { model: "pocketsphinx", input: { audio_format: "pcm_16000" } }, tts: { model: "flite", voice: "slt" }, upstream: PIPELINE.upstream },
    });
    const again = await fetch(`${server.url}/v1/realtime/profiles/${profile.id}`, { headers: { authorization: `Bearer ${server.key}` } });
    expect(await again.json()).toEqual(profile);
    const { key: other } = await fundedAccount(server);
    const hidden = await fetch(`${server.url}/v1/realtime/profiles/${profile.id}`, { headers: { authorization: `Bearer ${other}` } });
    expect(hidden.status).toBe(404);
    expect(await hidden.json()).toMatchObject({ error: "not_found" });
  });

  test("the application protocol: ConversationRelay unless speech_engine is asked; then the creating key is recorded to sign with, whatever the body says", async () => {
    const made = async (upstream: Record<string, unknown>) =>
      ((await (await post("/v1/realtime/profiles", { name: "p", pipeline: { ...PIPELINE, upstream } })).json()) as { pipeline: { upstream: Record<string, unknown> } }).pipeline.upstream;
    expect(await made({ url: "wss://app.example/voice" })).toEqual({ url: "wss://app.example/voice", headers: {} });
    const [{ id: keyId }] = await server.ctx.database.sql.query<{ id: string }>("SELECT id FROM api_keys WHERE prefix = ?", [server.key.slice(0, 12)]);
    expect(await made({ url: "wss://app.example/voice", protocol: "speech_engine", signing_key_id: "forged" })).toEqual({
      url: "wss://app.example/voice",
      headers: {},
      protocol: "speech_engine",
      signing_key_id: keyId,
    });
    const bad = await post("/v1/realtime/profiles", { name: "p", pipeline: { ...PIPELINE, upstream: { url: "wss://app.example/voice", protocol: "twilio" } } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: "invalid_request", param: "pipeline.upstream.protocol" });
  });

  test("bad pipelines are refused with the field named; no key is 401", async () => {
    const bad = async (pipeline: unknown, name: unknown = "x") => {
      const res = await post("/v1/realtime/profiles", { name, pipeline });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect(await bad({ ...PIPELINE, upstream: { url: "https://not-a-socket" } })).toMatchObject({ status: 400, body: { error: "invalid_request", param: "pipeline.upstream.url" } });
    expect(await bad({ ...PIPELINE, stt: { model: "flite" } })).toMatchObject({ status: 400, body: { error: "model_not_found", param: "pipeline.stt.model" } });
    expect(await bad({ ...PIPELINE, tts: {} })).toMatchObject({ status: 400, body: { error: "model_required" } });
    expect(await bad({ ...PIPELINE, tts: { model: "flite", provider: "espeak-ng" } })).toMatchObject({ status: 400, body: { error: "model_not_found" } });
    expect(await bad(PIPELINE, "")).toMatchObject({ status: 400, body: { param: "name" } });
    const upstream = (headers: unknown) => ({ ...PIPELINE, upstream: { url: "wss://app.example/voice", headers } });
    expect(await bad(upstream({ "x-evil": "a\r\nHost: other" }))).toMatchObject({ status: 400, body: { param: "pipeline.upstream.headers" } });
    expect(await bad(upstream({ Host: "other.example" }))).toMatchObject({ status: 400, body: { param: "pipeline.upstream.headers" } });
    expect(await bad(upstream({ "bad name": "x" }))).toMatchObject({ status: 400, body: { param: "pipeline.upstream.headers" } });
    expect(await bad({ ...PIPELINE, tts: { model: "flite", provider_options: JSON.parse('{"__proto__": "x"}') } })).toMatchObject({ status: 400, body: { param: "pipeline.tts.provider_options" } });
    expect(await bad({ ...PIPELINE, tts: { model: "flite", provider_options: { speed: null } } })).toMatchObject({ status: 400, body: { param: "pipeline.tts.provider_options" } });
    expect(await bad({ ...PIPELINE, tts: { model: "flite", voice: "v".repeat(201) } })).toMatchObject({ status: 400, body: { param: "pipeline.tts.voice" } });
    expect(await bad({ ...PIPELINE, stt: { model: "pocketsphinx", input: { blob: "x".repeat(5000) } } })).toMatchObject({ status: 400, body: { param: "pipeline.stt.input" } });
    expect((await fetch(`${server.url}/v1/realtime/profiles`, { method: "POST", body: "{}" })).status).toBe(401);
  });
});

describe("listing", () => {
  test("the tenant's profiles newest first, in pages that meet without gap or repeat; none of another tenant's", async () => {
    const { key } = await fundedAccount(server);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push(((await (await post("/v1/realtime/profiles", { name: `line ${i}`, pipeline: PIPELINE }, key)).json()) as { id: string }).id);
    await post("/v1/realtime/profiles", { name: "someone else's", pipeline: PIPELINE });
    const list = async (q: string) => {
      const res = await fetch(`${server.url}/v1/realtime/profiles${q}`, { headers: { authorization: `Bearer ${key}` } });
      return { status: res.status, body: (await res.json()) as any };
    };
    const seen: string[] = [];
    let next: string | null = "";
    for (let pages = 0; next !== null; pages++) {
      const { status, body } = await list(`?limit=2${next ? `&cursor=${next}` : ""}`);
      expect(status).toBe(200);
      expect(body.items.length).toBeLessThanOrEqual(2);
      for (const p of body.items) expect(p).toMatchObject({ object: "realtime.profile", pipeline: { tts: { model: "flite" } } });
      seen.push(...body.items.map((p: { id: string }) => p.id));
      next = body.next_cursor;
      expect(pages).toBeLessThan(5);
    }
    expect(seen).toEqual([...made].reverse());
    expect((await list("?limit=0")).body).toMatchObject({ error: "invalid_request", param: "limit" });
    expect((await list("?cursor=nope")).body).toMatchObject({ error: "invalid_request", param: "cursor" });
  });
});

describe("listing", () => {
  test("profiles made in the same millisecond still list newest first", async () => {
    const { key } = await fundedAccount(server);
    const made: string[] = [];
    setSystemTime(new Date("2026-11-27T12:00:00.000Z"));
    try {
      for (let i = 0; i < 6; i++) made.push(((await (await post("/v1/realtime/profiles", { name: `same ms ${i}`, pipeline: PIPELINE }, key)).json()) as { id: string }).id);
    } finally {
      setSystemTime();
    }
    const res = await fetch(`${server.url}/v1/realtime/profiles?limit=10`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await res.json()) as { items: { id: string }[] }).items.map((p) => p.id)).toEqual([...made].reverse());
  });
});

describe("how many profiles", () => {
  test("a tenant keeps at most PROFILES_PER_TENANT profiles", async () => {
    const { PROFILES_PER_TENANT } = await import("../src/realtime/profiles.ts");
    const { key, tenantId } = await fundedAccount(server);
    const { schema } = server.ctx.database;
    const now = new Date();
    const rows = Array.from({ length: PROFILES_PER_TENANT }, (_, i) => ({ id: `rp_fill_${tenantId}_${i}`, tenantId, name: `p${i}`, pipeline: "{}", revision: 1, createdAt: now, updatedAt: now }));
    for (let i = 0; i < rows.length; i += 200) await server.ctx.database.transaction((tx) => tx.insert(schema.realtimeProfiles).values(rows.slice(i, i + 200)));
    const res = await post("/v1/realtime/profiles", { name: "one too many", pipeline: PIPELINE }, key);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request", message: `a tenant keeps at most ${PROFILES_PER_TENANT} realtime profiles` });
  });
});

describe("/el/v1/speech-engine", () => {
  test("an engine created with the SDK is a profile; read back with the SDK and with the service block", async () => {
    const client = new ElevenLabsClient({ apiKey: server.key, baseUrl: `${server.url}/el`, maxRetries: 0 });
    // The SDK strips fields it does not know from the body and checks its own enums (its `tts.model_id`
    // names ElevenLabs models only): `service` goes as an additional body parameter.
    const created = await client.speechEngine.create(
      { name: "kiosk", speechEngine: { wsUrl: "wss://app.example/kiosk", requestHeaders: { "x-kiosk": "7" } } },
      { additionalBodyParameters: { service: { stt: { model_id: "pocketsphinx" }, tts: { model_id: "flite", voice_id: "slt" } } } },
    );
    expect(created.config).toMatchObject({ name: "kiosk", speechEngine: { wsUrl: "wss://app.example/kiosk" } });
    const got = await client.speechEngine.get(created.engineId);
    expect(got.engineId).toBe(created.engineId);
    expect(got.config).toMatchObject({ name: "kiosk", speechEngine: { wsUrl: "wss://app.example/kiosk", requestHeaders: { "x-kiosk": "7" } } });

    const raw = (await (await fetch(`${server.url}/el/v1/speech-engine/${created.engineId}`, { headers: { "xi-api-key": server.key } })).json()) as Record<string, unknown>;
    expect(raw).toMatchObject({
      speech_engine_id: created.engineId,
      speech_engine: { ws_url: "wss://app.example/kiosk", request_headers: { "x-kiosk": "7" }, protocol: "speech_engine" },
      service: { stt: { model_id: "pocketsphinx", provider: "pocketsphinx", provider_options: {}, input: {} }, tts: { model_id: "flite", provider: "flite", provider_options: {}, input: {} } },
    });
    const profile = await fetch(`${server.url}/v1/realtime/profiles/${created.engineId}`, { headers: { authorization: `Bearer ${server.key}` } });
    expect(await profile.json()).toMatchObject({ name: "kiosk", pipeline: { upstream: { url: "wss://app.example/kiosk" } } });
  });

  test("a profile made natively reads as an engine; errors in the {detail} envelope", async () => {
    const { id } = (await (await post("/v1/realtime/profiles", { name: "native", pipeline: PIPELINE })).json()) as { id: string };
    const engine = await fetch(`${server.url}/el/v1/speech-engine/${id}`, { headers: { authorization: `Bearer ${server.key}` } });
    expect(await engine.json()).toMatchObject({
      name: "native",
      speech_engine: { ws_url: PIPELINE.upstream.url, request_headers: PIPELINE.upstream.headers, protocol: "conversation_relay" },
      service: { tts: { model_id: "flite", voice_id: "slt" } },
    });
    const missing = await fetch(`${server.url}/el/v1/speech-engine/rp_nope`, { headers: { "xi-api-key": server.key } });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ detail: { status: "not_found" } });
    expect((await fetch(`${server.url}/el/v1/speech-engine/${id}`, { headers: { "xi-api-key": "vx-bad" } })).status).toBe(401);
    const noUrl = await post("/el/v1/speech-engine", { name: "x", speech_engine: {} }, server.key, "xi-api-key");
    expect(await noUrl.json()).toMatchObject({ detail: { status: "invalid_request", param: "speech_engine.ws_url" } });
    const noStt = await post("/el/v1/speech-engine", { name: "x", speech_engine: { ws_url: "wss://a.example" }, tts: { model_id: "flite" } }, server.key, "xi-api-key");
    expect(await noStt.json()).toMatchObject({ detail: { status: "model_required", param: "service.stt.model_id" } });
    const badProtocol = await post(
      "/el/v1/speech-engine",
      { name: "x", speech_engine: { ws_url: "wss://a.example", protocol: "sip" }, service: { stt: { model_id: "pocketsphinx" } } },
      server.key,
      "xi-api-key",
    );
    expect(await badProtocol.json()).toMatchObject({
      detail: { status: "invalid_request", param: "speech_engine.protocol", message: "speech_engine.protocol must be one of conversation_relay, speech_engine" },
    });
  });
});
