import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { createKey } from "./helpers/accounts.ts";
import { pcmOfWav } from "../src/audio/wav.ts";
import { spareCatalogue, SpareStt, SPARE_TEXT } from "./fakes/spare-stt.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { frames, silence } from "./helpers/speech.ts";
import { bearer, connect, type Client } from "./helpers/ws-client.ts";

// The local recognizer's capacity, on a server with one audio worker holding one decoder and a
// queue of one: sessions beyond it wait briefly, then are refused with provider_overloaded (1013
// after the upgrade, 503 with Retry-After before it); every way a session ends gives its decoder
// back; a refusal lets routing fall back where the request allows it. A second provider of the
// same model ("spare", after it in routing order) is there to be fallen back to.

const WAIT_MS = 3000;
const FIXTURE_TEXT = "thank you very much for your help";
const wav = new Uint8Array(await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer());
const speech = new Int16Array(pcmOfWav(wav).slice().buffer);

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(
    { AUDIO_WORKERS: "1", LOCAL_STT_DECODERS_PER_WORKER: "1", LOCAL_STT_QUEUE: "1", LOCAL_STT_QUEUE_WAIT_MS: String(WAIT_MS) },
    { extra: { catalogue: spareCatalogue(), providers: [], sttProviders: [new SpareStt()] } },
  );
});
afterAll(() => server.stop(0));

const PINNED = "model=pocketsphinx-en-us&audio_format=pcm_16000&allow_fallbacks=false";
const local = () => server.ctx.sttProviders.get("pocketsphinx")!;

// Every test leaves no session behind, even when it fails half-way.
const clients: Client[] = [];
function open(key = server.key, query = PINNED): Client {
  const c = connect(server.wsUrl(`/v1/stt?${query}`), bearer(key));
  clients.push(c);
  return c;
}
afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.close();
  await until(() => server.ctx.sessions.size === 0);
});

async function until(condition: () => boolean, ms = 30_000): Promise<void> {
  const end = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

/** Resolves once the session started (true) or closed without starting (false). */
async function started(c: Client): Promise<boolean> {
  let closed = false;
  void c.closed.then(() => (closed = true));
  await until(() => closed || c.rec.events.some((e) => e.type === "stt.session.started"), 20_000);
  return !closed;
}

/** A session that holds the decoder. */
async function holding(key = server.key): Promise<Client> {
  const c = open(key);
  expect(await started(c)).toBe(true);
  return c;
}

/** Streams the fixture, closes, and returns the finals and the close. */
async function transcribe(c: Client) {
  for (const f of frames(speech)) c.ws.send(f);
  for (const f of frames(silence(700))) c.ws.send(f);
  c.send({ type: "stt.session.close" });
  const rec = await c.closed;
  return {
    text: rec.events
      .filter((e) => e.type === "stt.transcript.final")
      .map((e) => e.text)
      .join(" "),
    close: rec.close,
  };
}

async function end(c: Client): Promise<void> {
  c.send({ type: "stt.session.close" });
  await c.closed;
}

describe.skipIf(!localSttAvailable)("the local recognizer at capacity", () => {
  test("a session beyond the decoders waits in the queue and is served as soon as one comes back", async () => {
    const first = await holding();
    const second = open();
    await until(() => local().overloaded?.() !== undefined); // it waits: the queue is full
    await end(first);
    expect(await started(second)).toBe(true);
    expect(await transcribe(second)).toEqual({ text: FIXTURE_TEXT, close: { code: 1000, reason: "stt_complete" } });
  }, 30_000);

  test("when the wait runs out: stt.error provider_overloaded and close 1013; the audio sent meanwhile is not billed", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `capacity-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    const first = await holding();
    const t0 = performance.now();
    const refused = open(key);
    await refused.opened;
    for (const f of frames(speech)) refused.ws.send(f);
    const rec = await refused.closed;
    const waited = performance.now() - t0;
    // It waited its turn in the queue (never started), and was refused while the decoder was still held.
    expect(rec.events).toEqual([expect.objectContaining({ type: "stt.error", code: "provider_overloaded" })]);
    expect(rec.close).toEqual({ code: 1013, reason: "provider_overloaded" });
    expect(waited).toBeGreaterThanOrEqual(WAIT_MS - 100);
    expect(first.rec.close.code).toBe(0); // still open
    await until(() => server.ctx.sessions.size === 1);
    expect((await server.ctx.meter.ledger.snapshot(tenantId)).balance).toMatchObject({ paidCredits: 1_000_000, paidHeld: 0 });
    await end(first);
  }, 30_000);

  test("every decoder busy and the queue full: 503 with Retry-After before the upgrade, and for files on every surface; nothing billed", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `capacity-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    const first = await holding();
    const second = open();
    await until(() => local().overloaded?.() !== undefined);

    const upgrade = await fetch(`${server.url}/v1/stt?${PINNED}`, {
      headers: { ...bearer(key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(upgrade.status).toBe(503);
    expect(upgrade.headers.get("retry-after")).toBe("3");
    expect(await upgrade.json()).toMatchObject({ error: "provider_overloaded", retry_after: 3 });

    const native = await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx-en-us&allow_fallbacks=false`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "audio/wav" },
      body: wav,
    });
    expect(native.status).toBe(503);
    expect(native.headers.get("retry-after")).toBe("3");
    expect(await native.json()).toMatchObject({ error: "provider_overloaded", retry_after: 3 });

    const form = (fields: Record<string, string>) => {
      const f = new FormData();
      f.set("file", new Blob([wav], { type: "audio/wav" }), "speech.wav");
      for (const [k, v] of Object.entries(fields)) f.set(k, v);
      return f;
    };
    const oai = await fetch(`${server.url}/oai/audio/transcriptions`, {
      method: "POST",
      headers: bearer(key),
      body: form({ model: "pocketsphinx", provider: JSON.stringify({ allow_fallbacks: false }) }),
    });
    expect(oai.status).toBe(503);
    expect(oai.headers.get("retry-after")).toBe("3");
    expect(await oai.json()).toMatchObject({ error: { type: "api_error", code: "provider_overloaded" } });

    const el = await fetch(`${server.url}/el/v1/speech-to-text?allow_fallbacks=false`, { method: "POST", headers: { "xi-api-key": key }, body: form({ model_id: "pocketsphinx/pocketsphinx-en-us" }) });
    expect(el.status).toBe(503);
    expect(el.headers.get("retry-after")).toBe("3");
    expect(await el.json()).toMatchObject({ detail: { status: "provider_overloaded", retry_after: 3 } });

    const { balance } = await server.ctx.meter.ledger.snapshot(tenantId);
    expect(balance).toMatchObject({ paidCredits: 1_000_000, paidHeld: 0 });
    await end(first);
    expect(await started(second)).toBe(true);
    await end(second);
  }, 30_000);

  test("a client that leaves while waiting gives up its place at once and takes no decoder", async () => {
    const first = await holding();
    const leaver = open();
    await until(() => local().overloaded?.() !== undefined);
    leaver.ws.close();
    await until(() => local().overloaded?.() === undefined, WAIT_MS / 3); // long before its wait would have run out
    const next = open();
    await until(() => local().overloaded?.() !== undefined);
    await end(first);
    // The decoder goes to the session still waiting, not to the one that left.
    expect(await started(next)).toBe(true);
    expect((await transcribe(next)).text).toBe(FIXTURE_TEXT);
  }, 30_000);

  test("every way a session ends gives its decoder back", async () => {
    const { key: poor, tenantId } = await createKey(server.ctx.database, `capacity-poor-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 25, type: "adjustment", description: "test" }); // 2 s of audio
    const endings: [string, (c: Client) => Promise<number>][] = [
      ["completed", async (c) => (await transcribe(c)).close.code],
      [
        "client gone mid-stream",
        async (c) => {
          for (const f of frames(speech.subarray(0, 16000))) c.ws.send(f);
          c.ws.close();
          return (await c.closed).close.code;
        },
      ],
      [
        "invalid frame",
        async (c) => {
          c.send({ type: "stt.audio.flush" });
          return (await c.closed).close.code;
        },
      ],
      [
        "balance used up",
        async (c) => {
          for (const f of frames(silence(5000))) c.ws.send(f);
          return (await c.closed).close.code;
        },
      ],
    ];
    const codes: Record<string, number> = {};
    for (const [name, ending] of endings) {
      // Each holds the only decoder; a decoder not given back would leave the next one waiting, then refused.
      const c = await holding(name === "balance used up" ? poor : server.key);
      codes[name] = await ending(c);
      await until(() => server.ctx.sessions.size === 0);
    }
    expect(codes).toEqual({ completed: 1000, "client gone mid-stream": 1005, "invalid frame": 1003, "balance used up": 4402 });
    const last = await holding();
    expect((await transcribe(last)).text).toBe(FIXTURE_TEXT);
  }, 60_000);
});

describe.skipIf(!localSttAvailable)("routing around a local recognizer at capacity", () => {
  test("where fallbacks are allowed, streams and files go to the next provider of the model", async () => {
    const first = await holding();
    const second = open();
    await until(() => local().overloaded?.() !== undefined);

    const c = open(server.key, "model=pocketsphinx-en-us&audio_format=pcm_16000");
    expect(await started(c)).toBe(true);
    expect(c.rec.events[0]).toMatchObject({ type: "stt.session.started", provider: "spare" });
    expect((await transcribe(c)).text).toBe(SPARE_TEXT);

    const file = await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx-en-us`, { method: "POST", headers: { ...bearer(server.key), "content-type": "audio/wav" }, body: wav });
    expect(await file.json()).toMatchObject({ text: SPARE_TEXT, provider: "spare" });
    await end(first);
    await end(second);
  }, 30_000);
});
