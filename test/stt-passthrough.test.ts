import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { desc, eq } from "drizzle-orm";
import { createKey } from "./helpers/accounts.ts";
import { RelayProvider, relayCatalogue, startRelayUpstream, type RelayUpstream } from "./fakes/relay-upstream.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

let upstream: RelayUpstream;
let server: TestServer;
beforeAll(async () => {
  upstream = startRelayUpstream();
  server = await startTestServer({}, { extra: { catalogue: relayCatalogue(), providers: [], sttProviders: [new RelayProvider(upstream.url)] } });
});
afterAll(async () => {
  await server.stop(0);
  upstream.stop();
});

describe("event_format=provider", () => {
  test("frames cross byte for byte both ways; no router frames; the upstream's close comes through", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `relay-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    upstream.received.length = 0;
    const c = connect(server.wsUrl("/v1/stt?model=relay-1&audio_format=pcm_16000&event_format=provider&provider_options[sample_rate]=16000"), bearer(key));
    const audio = new Uint8Array(32_000 * 2 + 10).map((_, i) => (i * 7) & 255); // a little over 2 s
    const native = '{"type":  "KeepAlive" , "x": [1,2]}';
    // Sent at once, before the upstream is connected: kept and relayed in order.
    c.ws.binaryType = "arraybuffer";
    await c.opened;
    c.ws.send(audio);
    c.ws.send(native);
    c.ws.send("123");
    c.ws.send('{"type":"CloseStream"}');
    const rec = await c.closed;
    expect(upstream.received).toEqual([audio, native, "123", '{"type":"CloseStream"}']);
    // The client got exactly the upstream's frames: four JSON texts as written, four binaries.
    expect(rec.events.map((e) => e.n)).toEqual([1, 2, 3, 4]);
    expect(rec.events.every((e) => e.type === "Results")).toBe(true);
    expect(rec.audio.map((a) => [...a])).toEqual([1, 2, 3, 4].map((n) => [n, 0, 255, 7]));
    expect(rec.close).toEqual({ code: 1000, reason: "done" });
    const { db, schema } = server.ctx.database;
    let rows: { usageAmount: number; provider: string }[] = [];
    for (let i = 0; i < 50 && !rows.length; i++) {
      await Bun.sleep(20);
      rows = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId)).orderBy(desc(schema.activity.startedAt));
    }
    expect(rows[0]).toMatchObject({ provider: "relay", usageAmount: 3 });
  });

  test("a balance that covers no audio at all: 4402, nothing relayed, recorded failed and unbilled", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `relay-none-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 100, type: "adjustment", description: "test" }); // admitted, but a second needs 101
    upstream.received.length = 0;
    const c = connect(server.wsUrl("/v1/stt?model=relay-1&audio_format=pcm_16000&event_format=provider"), bearer(key));
    await c.opened;
    c.ws.send(new Uint8Array(32_000));
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "insufficient_balance" }) });
    expect(upstream.received).toEqual([]);
    const { db, schema } = server.ctx.database;
    expect(await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId))).toMatchObject([{ status: "failed", usageAmount: 0, credits: 0 }]);
  });

  test("a server past its grace period: 1001 to the client, the audio received billed (recorded failed, as any close but 1000), counted as shutdown", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `relay-shutdown-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    const shutdowns = async () => Number(/^voxroute_requests_total\{surface="native",provider="relay",status="shutdown"\} (\S+)$/m.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1] ?? 0);
    const before = await shutdowns();
    upstream.received.length = 0;
    const c = connect(server.wsUrl("/v1/stt?model=relay-1&audio_format=pcm_16000&event_format=provider"), bearer(key));
    await c.opened;
    c.ws.send(new Uint8Array(32_000)); // 1 s
    for (let i = 0; i < 250 && !upstream.received.length; i++) await Bun.sleep(20);
    expect(upstream.received).toHaveLength(1);
    await server.ctx.sessions.drain(0);
    expect((await c.closed).close).toEqual({ code: 1001, reason: "server_shutdown" });
    const { db, schema } = server.ctx.database;
    expect(await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId))).toMatchObject([{ provider: "relay", status: "failed", usageAmount: 1 }]); // closed with a code other than 1000
    expect(await shutdowns()).toBe(before + 1);
  });

  test("text frames are relayed unparsed: the raw text reaches the upstream", async () => {
    upstream.received.length = 0;
    const c = connect(server.wsUrl("/v1/stt?model=relay-1&audio_format=pcm_16000&event_format=provider"), bearer(server.key));
    await c.opened;
    const odd = '{ "type" : "Finalize" }   ';
    c.ws.send(odd);
    c.ws.send('{"type":"CloseStream"}');
    await c.closed;
    expect(upstream.received[0]).toBe(odd);
  });

  test("a provider_options declaration that contradicts audio_format is refused before the upgrade", async () => {
    const res = await fetch(`${server.url}/v1/stt?model=relay-1&audio_format=pcm_16000&event_format=provider&provider_options[sample_rate]=8000`, {
      headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "conflicting_audio_format" });
  });
});

describe("metering base64 audio in passthrough text frames", () => {
  test("OpenAI: every spelling of the event type counts; a session.update to 8 kHz µ-law is still billed at the declared rate", async () => {
    const { appendMeter } = await import("../src/providers/openai/realtime-stt.ts");
    const meter = appendMeter(48000);
    const audio = Buffer.alloc(4800).toString("base64");
    expect(meter(JSON.stringify({ type: "input_audio_buffer.append", audio }))).toBe(4800);
    expect(meter(`{"type":"input_audio_buffer.\\u0061ppend","audio":"${audio}"}`)).toBe(4800);
    expect(meter('{"type":"input_audio_buffer.commit"}')).toBe(0);
    expect(meter("not json")).toBe(0);
    expect(meter(JSON.stringify({ type: "session.update", session: { audio: { input: { format: { type: "audio/pcmu" } } } } }))).toBe(0);
    expect(meter(JSON.stringify({ type: "input_audio_buffer.append", audio: Buffer.alloc(800).toString("base64") }))).toBe(4800); // 0.1 s either way
  });

  test("Scribe: escaped message types count; a chunk at another sample_rate is billed by its duration", async () => {
    const { scribeChunkMeter } = await import("../src/providers/elevenlabs/realtime-stt.ts");
    const meter = scribeChunkMeter(16000);
    const audio = Buffer.alloc(3200).toString("base64");
    expect(meter(`{"message_type":"input_audio_\\u0063hunk","audio_base_64":"${audio}"}`)).toBe(3200);
    expect(meter(JSON.stringify({ message_type: "input_audio_chunk", audio_base_64: audio, sample_rate: 8000 }))).toBe(6400);
  });
});

describe("normalized events: frames gathered per loop turn", () => {
  test("a burst of frames reaches the upstream in fewer messages, byte for byte and in order, each under 250 ms, ahead of the commit", async () => {
    const c = connect(server.wsUrl("/v1/stt?model=relay-1&audio_format=pcm_16000"), bearer(server.key));
    while (!c.rec.events.some((e) => e.type === "stt.session.started")) await Bun.sleep(5);
    upstream.received.length = 0;
    const frames = Array.from({ length: 60 }, (_, f) => new Uint8Array(640).map((_, i) => (f * 31 + i) & 255));
    for (const f of frames) c.ws.send(f);
    c.send({ type: "stt.audio.commit" });
    c.send({ type: "stt.session.close" });
    await c.closed;
    const binary = upstream.received.filter((f): f is Uint8Array => typeof f !== "string");
    expect(Buffer.concat(binary)).toEqual(Buffer.concat(frames));
    expect(binary.length).toBeLessThan(frames.length);
    expect(Math.max(...binary.map((b) => b.byteLength))).toBeLessThanOrEqual(8000);
    expect(upstream.received.slice(binary.length)).toEqual(['{"type":"Finalize"}', '{"type":"CloseStream"}']);
  });
});
