import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MPEGDecoder } from "mpg123-decoder";
import { BrokenProvider, FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect, peak, totalBytes } from "./helpers/ws-client.ts";

let server: TestServer;
const fixed = new FixedPcmProvider("fixed");
const refusing = new BrokenProvider("refusing", "refuse");
const dying = new BrokenProvider("dying", "fail-before-audio");
const lateDying = new BrokenProvider("late-dying", "fail-after-audio");
const hanging = new BrokenProvider("hanging", "hang");
const badVoice = new BrokenProvider("bad-voice", "reject-voice");
const slow = new FixedPcmProvider("slow", 3, 300);
const bulk = new FixedPcmProvider("bulk", 5000);

beforeAll(async () => {
  // Providers get 300 ms to accept, so that the hanging one is left quickly; an embedded engine is
  // loaded in its worker by its first session, which can take longer: one worker, warmed below.
  server = await startTestServer(
    { PROVIDER_CONNECT_TIMEOUT_MS: "300", TTS_WORKERS: "1" },
    {
      extra: {
        catalogue: testCatalogue(["refusing", "dying", "late-dying", "hanging", "bad-voice", "slow", "bulk", "fixed"]),
        providers: [fixed, refusing, dying, lateDying, hanging, badVoice, slow, bulk],
      },
    },
  );
  for (const query of ["model=flite&voice=slt", "model=svox%2Fpico&voice=en-US"]) await warmUp(query);
});
afterAll(() => server.stop(0));

/** Loads an embedded engine in the worker with sessions of its own until one is served, however long loading takes. */
async function warmUp(query: string) {
  for (;;) {
    const c = connect(tts(query), bearer(server.key));
    c.send({ type: "text", text: "Warm." });
    c.send({ type: "close" });
    if ((await c.closed).close.code === 1000) return;
  }
}

const tts = (query: string) => server.wsUrl(`/v1/tts?${query}`);

describe("/v1/tts with an embedded engine", () => {
  test("text → flush → audio → close → service.tts_session_ended → 1000 tts_complete", async () => {
    const c = connect(tts("model=flite&voice=slt"), bearer(server.key));
    await c.opened;
    c.send({ type: "text", text: "Hello from the router. " });
    c.send({ type: "flush" });
    c.send({ type: "text", text: "And a second sentence" });
    c.send({ type: "close" });
    const rec = await c.closed;

    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    // The first candidate connected at once: no provider_status, the session's first frame says it is ready.
    expect(rec.order[0]).toBe("service.tts_session_ready");
    expect(rec.order).not.toContain("service.tts_provider_status");
    expect(rec.order.at(-1)).toBe("service.tts_session_ended");
    // Audio metadata comes before the first binary frame; a flush is acknowledged after its audio.
    const firstAudio = rec.order.indexOf("audio");
    expect(rec.order.indexOf("service.tts_audio_started")).toBe(firstAudio - 1);
    expect(rec.order.indexOf("service.tts_flushed")).toBeGreaterThan(firstAudio);
    expect(rec.order.lastIndexOf("audio")).toBeGreaterThan(rec.order.indexOf("service.tts_flushed"));

    const started = rec.events.find((e) => e.type === "service.tts_audio_started")!;
    expect(started).toMatchObject({ provider: "flite", model: "cmu/flite", encoding: "pcm_s16le", sample_rate: 16000, channels: 1 });
    const ended = rec.events.at(-1)!;
    const bytes = totalBytes(rec.audio);
    expect(ended).toMatchObject({ provider: "flite", characters: 44, audio_bytes: bytes });
    // Two short sentences: a few seconds of clearly audible speech.
    const seconds = bytes / 2 / 16000;
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(8);
    expect(peak(rec.audio)).toBeGreaterThan(3000);
  });

  test("text sent before the session is ready is kept and synthesized", async () => {
    // The provider takes 300 ms to accept: every frame below reaches the session while it is starting.
    const c = connect(tts(`model=${TEST_MODEL}&provider=slow`), bearer(server.key));
    c.send({ type: "text", text: "Queued " });
    c.send({ type: "flush" });
    c.send({ type: "text", text: "before ready." });
    c.send({ type: "close" });
    await c.opened;
    await Bun.sleep(100);
    expect(c.rec.events.some((e) => e.type === "service.tts_session_ready")).toBe(false);
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.order.filter((t) => t !== "service.tts_provider_status")).toEqual([
      "service.tts_session_ready",
      "service.tts_audio_started",
      "audio",
      "audio",
      "audio",
      "service.tts_flushed",
      "audio",
      "audio",
      "audio",
      "service.tts_session_ended",
    ]);
  });

  test("Pico speaks a sentence sent at once after the upgrade", async () => {
    const c = connect(tts("model=svox%2Fpico&voice=en-US"), bearer(server.key));
    c.send({ type: "text", text: "Queued before ready." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(totalBytes(rec.audio) / 2 / 16000).toBeGreaterThan(0.8);
    expect(peak(rec.audio)).toBeGreaterThan(3000);
  });

  test("format=mp3 streams MP3 that decodes to the spoken audio", async () => {
    const c = connect(tts("model=flite&voice=kal16&format=mp3"), bearer(server.key));
    c.send({ type: "text", text: "This arrives as MP3." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.find((e) => e.type === "service.tts_audio_started")).toMatchObject({ encoding: "mp3", sample_rate: 16000 });
    const decoder = new MPEGDecoder();
    await decoder.ready;
    const mp3 = Buffer.concat(rec.audio);
    const decoded = decoder.decode(mp3);
    decoder.free();
    expect(decoded.sampleRate).toBe(16000);
    const pcm = decoded.channelData[0];
    expect(pcm.length / 16000).toBeGreaterThan(0.8);
    expect(pcm.reduce((m, x) => Math.max(m, Math.abs(x)), 0)).toBeGreaterThan(0.1);
  });

  test("auto_flush=false holds text until a flush; the default speaks complete sentences at once", async () => {
    const sentence = { type: "text", text: "A whole sentence that is complete. " };
    const held = connect(tts("model=flite&voice=slt&auto_flush=false"), bearer(server.key));
    const eager = connect(tts("model=flite&voice=slt"), bearer(server.key));
    held.send(sentence);
    eager.send(sentence);
    await Bun.sleep(1000);
    expect(held.rec.audio.length).toBe(0);
    expect(eager.rec.audio.length).toBeGreaterThan(0);
    held.send({ type: "flush" });
    held.send({ type: "close" });
    eager.send({ type: "close" });
    const rec = await held.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.order.indexOf("audio")).toBeLessThan(rec.order.indexOf("service.tts_flushed"));
    expect(totalBytes(rec.audio)).toBe(totalBytes((await eager.closed).audio));
  });
});

describe("/v1/tts frame and query errors", () => {
  test("a malformed frame closes with 1003 invalid_tts_frame", async () => {
    for (const bad of ["not json", JSON.stringify({ type: "speak", text: "x" }), JSON.stringify({ type: "text", text: 5 })]) {
      const c = connect(tts("model=flite"), bearer(server.key));
      await c.opened;
      c.send(bad);
      const rec = await c.closed;
      expect(rec.close).toEqual({ code: 1003, reason: "invalid_tts_frame" });
      expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", code: "invalid_tts_frame" });
    }
  });

  test("a binary frame closes with 1003", async () => {
    const c = connect(tts("model=flite"), bearer(server.key));
    await c.opened;
    c.ws.send(new Uint8Array([1, 2, 3]));
    expect((await c.closed).close.code).toBe(1003);
  });

  test("a text frame over 2000 characters closes with 1009 tts_text_frame_too_large", async () => {
    const c = connect(tts("model=flite"), bearer(server.key));
    await c.opened;
    c.send({ type: "text", text: "é".repeat(2001) });
    expect((await c.closed).close).toEqual({ code: 1009, reason: "tts_text_frame_too_large" });
  });

  test("a large stream (over the socket's backpressure limit) arrives whole and in order", async () => {
    const c = connect(tts(`model=${TEST_MODEL}&provider=bulk`), bearer(server.key));
    c.send({ type: "text", text: "lots" });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.audio.length).toBe(5000);
    expect(totalBytes(rec.audio)).toBe(5000 * 640);
    expect(rec.events.at(-1)).toMatchObject({ audio_bytes: 5000 * 640 });
  });

  test("frames after close are ignored", async () => {
    const c = connect(tts(`model=${TEST_MODEL}&provider=fixed`), bearer(server.key));
    c.send({ type: "text", text: "counted" });
    c.send({ type: "close" });
    c.send({ type: "text", text: "ignored" });
    c.send({ type: "flush" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_session_ended", characters: 7 });
    expect(rec.audio.length).toBe(5);
  });

  test("exactly 2000 characters (counted as characters, not UTF-16 units) is accepted", async () => {
    const c = connect(tts(`model=${TEST_MODEL}&provider=fixed`), bearer(server.key));
    c.send({ type: "text", text: "😀".repeat(2000) });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.at(-1)).toMatchObject({ characters: 2000 });
  });

  test("a missing key closes with 4401 missing_api_key; a wrong one with 4401 invalid_api_key", async () => {
    const missing = await connect(tts("model=flite")).closed;
    expect(missing.close).toEqual({ code: 4401, reason: JSON.stringify({ error: "missing_api_key" }) });
    const invalid = await connect(tts("model=flite"), bearer("vxr_not-a-real-key")).closed;
    expect(invalid.close).toEqual({ code: 4401, reason: JSON.stringify({ error: "invalid_api_key" }) });
    expect(missing.audio.length + invalid.audio.length).toBe(0);
  });

  test("a disabled tenant closes with 4403 tenant_disabled", async () => {
    const { schema } = server.ctx.database;
    const { createKey } = await import("./helpers/accounts.ts");
    const { key, tenantId } = await createKey(server.ctx.database, "disabled-tenant");
    const { eq } = await import("drizzle-orm");
    await server.ctx.database.transaction((tx) => tx.update(schema.tenants).set({ disabled: true }).where(eq(schema.tenants.id, tenantId)));
    const rec = await connect(tts("model=flite"), bearer(key)).closed;
    expect(rec.close).toEqual({ code: 4403, reason: JSON.stringify({ error: "tenant_disabled" }) });
  });

  test("preferences that exclude every provider close with 4403 provider_not_allowed after auth", async () => {
    const rec = await connect(tts("model=flite&provider_ignore=flite"), bearer(server.key)).closed;
    expect(rec.close).toEqual({ code: 4403, reason: JSON.stringify({ error: "provider_not_allowed" }) });
    const unauth = await connect(tts("model=flite&provider_ignore=flite")).closed;
    expect(unauth.close.code).toBe(4401);
  });

  async function upgrade(query: string) {
    const res = await fetch(`${server.url}/v1/tts?${query}`, {
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  test("query errors answer HTTP 400 with the flat envelope before the upgrade", async () => {
    expect(await upgrade("voice=slt")).toMatchObject({ status: 400, body: { error: "model_required" } });
    expect(await upgrade("model=pico")).toMatchObject({ status: 400, body: { error: "voice_required" } });
    expect(await upgrade("model=no-such-model")).toMatchObject({ status: 400, body: { error: "model_not_found" } });
    expect(await upgrade("model=flite&format=wav")).toMatchObject({ status: 400, body: { error: "invalid_request" } });
  });

  test("the channel's path with a trailing slash is the channel too", async () => {
    const c = connect(server.wsUrl("/v1/tts/?model=flite&voice=slt"), bearer(server.key));
    c.send({ type: "text", text: "Hello." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events[0]).toMatchObject({ type: "service.tts_session_ready" });
    expect(rec.audio.length).toBeGreaterThan(0);
  });

  test("a plain GET answers 426 websocket_upgrade_required", async () => {
    const res = await fetch(`${server.url}/v1/tts?model=flite`);
    expect(res.status).toBe(426);
    expect(await res.json()).toMatchObject({ error: "websocket_upgrade_required" });
  });
});

describe("/v1/tts fallback", () => {
  async function run(query: string) {
    const c = connect(tts(`model=${TEST_MODEL}&${query}`), bearer(server.key));
    c.send({ type: "text", text: "Fallback please." });
    c.send({ type: "close" });
    return c.closed;
  }
  const statuses = (rec: { events: Record<string, any>[] }) => rec.events.filter((e) => e.type === "service.tts_provider_status").map((e) => `${e.provider}:${e.status}`);

  test("a provider that refuses is skipped for the next candidate", async () => {
    const rec = await run("provider_order=refusing,fixed");
    expect(rec.close.code).toBe(1000);
    expect(statuses(rec)).toEqual(["refusing:failed", "fixed:connecting", "fixed:connected"]);
    expect(rec.audio.length).toBe(5);
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_session_ended", provider: "fixed" });
  });

  test("a provider that fails before its first audio is replaced and the text replayed", async () => {
    const rec = await run("provider_only=dying,fixed");
    expect(statuses(rec)).toEqual(["dying:failed", "fixed:connecting", "fixed:connected"]);
    expect(rec.close.code).toBe(1000);
    expect(rec.audio.length).toBe(5);
  });

  test("a provider that never answers is given up after the connect timeout", async () => {
    const rec = await run("provider_only=hanging,fixed");
    expect(statuses(rec)).toEqual(["hanging:failed", "fixed:connecting", "fixed:connected"]);
    expect(rec.close.code).toBe(1000);
  });

  test("allow_fallbacks=false uses only the first provider and ends with 1011 upstream_error", async () => {
    const before = fixed.opened;
    const rec = await run("provider_order=refusing,fixed&allow_fallbacks=false");
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(statuses(rec)).toEqual(["refusing:failed"]);
    expect(rec.events.at(-1)).toMatchObject({ type: "service.tts_error", code: "upstream_error" });
    expect(fixed.opened).toBe(before);
  });

  test("a failure after audio started switches too: the text whose audio had not ended goes to the next candidate, 1000", async () => {
    const rec = await run("provider_only=late-dying,fixed");
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(statuses(rec)).toEqual(["late-dying:failed", "fixed:connecting", "fixed:connected"]);
    expect(rec.audio.length).toBe(1 + 5); // the dying provider's one chunk, then the fallback's whole sentence
  });

  test("with allow_fallbacks=false a failure after audio started ends 1011 upstream_error, the audio already sent stands", async () => {
    const before = fixed.opened;
    const rec = await run("provider=late-dying&allow_fallbacks=false");
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.audio.length).toBe(1);
    expect(fixed.opened).toBe(before);
  });

  test("a caller error (a voice the provider refuses) is not retried elsewhere: 1008 invalid_request, not 1011", async () => {
    const before = fixed.opened;
    const rec = await run("provider_only=bad-voice,fixed");
    expect(rec.close).toEqual({ code: 1008, reason: "invalid_request" });
    expect(rec.events.find((e) => e.type === "service.tts_error")).toMatchObject({ code: "invalid_request", message: "unknown voice", param: "voice" });
    expect(fixed.opened).toBe(before);
  });
});
