import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TtsEvent, TtsProvider, TtsStream } from "../src/providers/types.ts";
import { AsyncQueue } from "../src/util/async-queue.ts";
import { FIXED_CHUNK, FIXED_RATE, FixedPcmProvider, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { RelayProvider, relayCatalogue, startRelayUpstream, type RelayUpstream } from "./fakes/relay-upstream.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect, type Client } from "./helpers/ws-client.ts";

// /v1/tts and /v1/stt close a session nobody uses: no client frame and nothing sent to the client
// for TTS_IDLE_TIMEOUT_MS / STT_IDLE_TIMEOUT_MS (short here). A session in use stays open.

const IDLE_MS = 400;
const SLOW_CHUNKS = 15;
const SLOW_INTERVAL_MS = 100; // 1.5 s of production, far past the idle timeout

/** Speaks each flush as SLOW_CHUNKS chunks, one every SLOW_INTERVAL_MS: audio still being produced. */
class SlowPcmProvider implements TtsProvider {
  readonly id = "slow";
  async open(): Promise<TtsStream> {
    const queue = new AsyncQueue<TtsEvent>();
    let timer: Timer | undefined;
    let ending = false;
    return {
      audioFormat: { encoding: "pcm_s16le", sampleRate: FIXED_RATE, channels: 1 },
      write: () => {},
      flush: () => {
        let n = 0;
        timer = setInterval(() => {
          queue.push({ type: "audio", audio: FIXED_CHUNK });
          if (++n < SLOW_CHUNKS) return;
          clearInterval(timer);
          timer = undefined;
          queue.push({ type: "flushed" });
          if (ending) queue.end();
        }, SLOW_INTERVAL_MS);
      },
      end: () => {
        ending = true;
        if (!timer) queue.end();
      },
      cancel: () => {
        clearInterval(timer);
        queue.end();
      },
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }
  async voices() {
    return [];
  }
}

let server: TestServer;
let upstream: RelayUpstream;
beforeAll(async () => {
  upstream = startRelayUpstream();
  const tts = testCatalogue(["fixed", "slow"]);
  const stt = relayCatalogue();
  server = await startTestServer(
    { TTS_IDLE_TIMEOUT_MS: String(IDLE_MS), STT_IDLE_TIMEOUT_MS: String(IDLE_MS) },
    {
      extra: {
        catalogue: { providers: [...tts.providers, ...stt.providers], models: [...tts.models, ...stt.models] },
        providers: [new FixedPcmProvider("fixed", 2), new SlowPcmProvider()],
        sttProviders: [new RelayProvider(upstream.url)],
      },
    },
  );
});
afterAll(async () => {
  await server.stop(0);
  upstream.stop();
});

const IDLE_CLOSE = { code: 4408, reason: JSON.stringify({ error: "idle_timeout" }) };

/** Keeps sending `frame()` every 150 ms for `ms`, then checks the socket is still open. */
async function keepBusy(c: Client, ms: number, frame: () => unknown) {
  await c.opened;
  const until = performance.now() + ms;
  while (performance.now() < until) {
    c.ws.send(frame() as string);
    await Bun.sleep(150);
  }
  expect(c.ws.readyState).toBe(WebSocket.OPEN);
}

/** The session's end, and how long the server had been silent before its error event and close. */
async function idleEnd(c: Client) {
  const arrivals: number[] = [];
  c.ws.addEventListener("message", () => arrivals.push(performance.now()));
  const rec = await c.closed;
  return { rec, waited: arrivals.at(-1)! - arrivals.at(-2)! };
}

describe("/v1/tts idle timeout", () => {
  const tts = (provider: string) => server.wsUrl(`/v1/tts?model=${provider}/echo`);

  test("an idle session closes 4408 idle_timeout after service.tts_error; the audio delivered is billed", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(tts("fixed"), bearer(key));
    c.send({ type: "text", text: "Spoken once. " });
    c.send({ type: "flush" });
    const { rec, waited } = await idleEnd(c);
    expect(rec.close).toEqual(IDLE_CLOSE);
    expect(rec.events.at(-1)).toEqual({ type: "service.tts_error", code: "idle_timeout", message: expect.any(String) });
    expect(rec.audio.length).toBe(2);
    expect(rec.order.lastIndexOf("audio")).toBeLessThan(rec.order.indexOf("service.tts_error")); // the audio delivered, then the idle error
    expect(waited).toBeGreaterThan(IDLE_MS * 0.5);
    expect(await lastActivity(server, tenantId)).toMatchObject({ usageAmount: 13, status: "failed" });
  });

  test("a session whose client keeps sending frames stays open", async () => {
    const c = connect(tts("fixed"), bearer(server.key));
    await keepBusy(c, IDLE_MS * 4, () => JSON.stringify({ type: "text", text: "more " }));
    c.send({ type: "close" });
    expect((await c.closed).close.code).toBe(1000);
  });

  test("audio still being produced is not idleness: every chunk arrives, then the idle close", async () => {
    const c = connect(tts("slow"), bearer(server.key));
    c.send({ type: "text", text: "A long answer. " });
    c.send({ type: "flush" });
    const rec = await c.closed;
    expect(rec.audio.length).toBe(SLOW_CHUNKS);
    expect(rec.events.some((e) => e.type === "service.tts_flushed")).toBe(true);
    expect(rec.close).toEqual(IDLE_CLOSE);
  });

  test("after close, the session finishes however long it takes", async () => {
    const c = connect(tts("slow"), bearer(server.key));
    c.send({ type: "text", text: "Last words. " });
    c.send({ type: "flush" });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.audio.length).toBe(SLOW_CHUNKS);
  });
});

describe("/v1/stt idle timeout", () => {
  const stt = (extra = "") => server.wsUrl(`/v1/stt?model=relay-1&audio_format=pcm_16000${extra}`);
  const second = () => new Uint8Array(32_000);

  test("an idle session closes 4408 idle_timeout after stt.error; the audio received is billed", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(stt(), bearer(key));
    const end = idleEnd(c);
    await c.opened;
    c.ws.send(second());
    const { rec, waited } = await end;
    expect(rec.close).toEqual(IDLE_CLOSE);
    expect(rec.events.at(-1)).toMatchObject({ type: "stt.error", code: "idle_timeout" });
    expect(rec.order.indexOf("stt.transcript.final")).toBeGreaterThan(-1);
    expect(rec.order.indexOf("stt.transcript.final")).toBeLessThan(rec.order.indexOf("stt.error")); // the audio's final, then the idle error
    expect(waited).toBeGreaterThan(IDLE_MS * 0.5);
    expect(await lastActivity(server, tenantId)).toMatchObject({ usageAmount: 1 });
  });

  test("a session that keeps streaming audio stays open", async () => {
    const c = connect(stt(), bearer(server.key));
    await keepBusy(c, IDLE_MS * 4, () => new Uint8Array(3200));
    c.send({ type: "stt.session.close" });
    expect((await c.closed).close.code).toBe(1000);
  });

  test("an empty binary frame is a keep-alive: the session stays open and nothing reaches the provider", async () => {
    upstream.received.length = 0;
    const c = connect(stt(), bearer(server.key));
    await keepBusy(c, IDLE_MS * 4, () => new Uint8Array(0));
    expect(upstream.received).toEqual([]);
    c.send({ type: "stt.session.close" });
    expect((await c.closed).close.code).toBe(1000);
  });

  test("event_format=provider: the relay closes 4408 too, and the provider's own keep-alive frames count as activity", async () => {
    const idle = connect(stt("&event_format=provider"), bearer(server.key));
    await idle.opened;
    idle.ws.send(second());
    expect((await idle.closed).close).toEqual(IDLE_CLOSE);

    const busy = connect(stt("&event_format=provider"), bearer(server.key));
    await keepBusy(busy, IDLE_MS * 4, () => '{"type":"KeepAlive"}');
    busy.ws.send('{"type":"CloseStream"}');
    expect((await busy.closed).close.code).toBe(1000);
  });
});
