// bun run bench:hot-js — the router's own event-loop work per utterance, with no network: the real
// `/v1/tts` route (handshake admission, session, the OpenAI provider's utterance stream, meter, and
// the ledger on SQLite with its worker) on in-memory sockets, the upstream answering from memory (a
// sentence's 150 KB of audio in 3 chunks), beside a plain relay's JavaScript (bench/plain-relay.ts)
// on the same fakes. Main-thread CPU per session to start it (admission to `session_ready`, its hold
// written behind) and per utterance, from the text frame to the close, for
// BENCH_HOT_SESSIONS (default 2000) sessions at once: rounds long enough for /proc's scheduler
// clock; the median of BENCH_ROUNDS (default 15). BENCH_CHUNKS (default 3): the chunks each answer comes
// in (bench:upstream's fake sends 32, as a provider streaming 100 ms pieces does: the per-chunk path). No kernel and no other process take part: what
// the router's JavaScript itself adds, steadier than bench:upstream on a shared machine.
import "./lib/keep-touched-memory.ts";
import { readFileSync } from "node:fs";
import { ttsSocket } from "../src/surfaces/native/tts-route.ts";
import { DEFER_MS } from "../src/ledger/deferred-holds.ts";
import { UtteranceTtsStream } from "../src/providers/utterance-stream.ts";
import type { AudioFormat } from "../src/providers/types.ts";
import { startTestServer } from "../test/helpers/server.ts";
import { median } from "./lib/stats.ts";

const N = Number(process.env.BENCH_HOT_SESSIONS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const WARM = 3;
const TEXT = "The router should add almost no latency to this sentence.";
const AUDIO = new Uint8Array(150_000);
const CHUNKS = Number(process.env.BENCH_CHUNKS ?? 3);

const mainThreadMicros = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1000;

/** An upstream's answer to one utterance, from memory: the audio in CHUNKS chunks. */
function answer(): Response {
  const size = AUDIO.length / CHUNKS;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < CHUNKS; i++) c.enqueue(AUDIO.subarray(i * size, (i + 1) * size));
      c.close();
    },
  });
  return new Response(body, { headers: { "content-type": "audio/pcm" } });
}

interface FakeSocket {
  data: Record<string, unknown>;
  readyState: number;
  closed: () => void;
}

/** Main-thread µs per session of each round after the warm ones, to open it and for its utterance: `speak` gets the sockets `open` made, and resolves once every one closed. */
async function rounds<S extends FakeSocket>(open: () => Promise<S[]>, speak: (ws: S) => void): Promise<{ start: number; utterance: number }> {
  const per: number[] = [];
  const starts: number[] = [];
  for (let r = 0; r < WARM + ROUNDS; r++) {
    const opening = mainThreadMicros();
    const sockets = await open();
    await Bun.sleep(DEFER_MS + 50); // the holds written behind as the sessions started land (after up to DEFER_MS)
    const before = mainThreadMicros();
    if (r >= WARM) starts.push((before - opening) / N);
    await Promise.all(
      sockets.map(
        (ws) =>
          new Promise<void>((closed) => {
            ws.closed = closed;
            speak(ws);
          }),
      ),
    );
    if (r >= WARM) per.push((mainThreadMicros() - before) / N);
  }
  return { start: median(starts), utterance: median(per) };
}

async function router(): Promise<{ start: number; utterance: number }> {
  const server = await startTestServer({ OPENAI_API_KEY: "bench", OPENAI_BASE_URL: "http://127.0.0.1:9", TTS_CACHE_BYTES: "0", LOG_LEVEL: "silent" });
  const openai = server.ctx.providers.get("openai")!;
  const format: AudioFormat = { encoding: "pcm_s16le", sampleRate: 24000, channels: 1 };
  openai.open = async () => new UtteranceTtsStream(format, "openai", 10_000, async () => answer());
  const route = ttsSocket(server.ctx);
  const socket = (data: Record<string, unknown>) => {
    const ws = {
      data: Object.assign(data, route.socket),
      readyState: 1,
      closed: () => {},
      ready: undefined as unknown as Promise<void>,
      isReady: () => {},
      send: (frame: string | Uint8Array) => {
        if (typeof frame === "string" && frame.includes("session_ready")) ws.isReady();
        return 1;
      },
      cork: (fn: (w: unknown) => void) => fn(ws),
      close: () => {
        if (ws.readyState !== 1) return;
        ws.readyState = 3;
        queueMicrotask(() => {
          route.socket.close(ws as never);
          ws.closed();
        });
      },
    };
    ws.ready = new Promise<void>((resolve) => (ws.isReady = resolve));
    return ws;
  };
  const open = () =>
    Promise.all(
      Array.from({ length: N }, async () => {
        const request = new Request("http://bench/v1/tts?model=tts-1&voice=alloy", { headers: { authorization: `Bearer ${server.key}`, upgrade: "websocket" } });
        const ws = socket((await route.admit(request, new URL(request.url).searchParams, {}, undefined as never)) as unknown as Record<string, unknown>);
        route.socket.open(ws as never);
        await ws.ready;
        return ws;
      }),
    );
  const micros = await rounds(open, (ws) => {
    route.socket.message(ws as never, JSON.stringify({ type: "text", text: TEXT }));
    route.socket.message(ws as never, JSON.stringify({ type: "close" }));
  });
  await server.stop(0);
  return micros;
}

/** bench/plain-relay.ts's socket handler, its fetch answered from memory. */
async function relay(): Promise<{ start: number; utterance: number }> {
  type RelaySocket = FakeSocket & { data: { speaking: Promise<void> }; send(chunk: Uint8Array): number; close(): void };
  const message = (ws: RelaySocket, text: string) => {
    const frame = JSON.parse(text) as { type: string; text?: string };
    if (frame.type === "text") {
      const previous = ws.data.speaking;
      ws.data.speaking = (async () => {
        JSON.stringify({ model: "tts-1", voice: "alloy", input: frame.text, response_format: "pcm" });
        const res = answer();
        await previous;
        for await (const chunk of res.body!) ws.send(chunk);
      })();
    } else if (frame.type === "close") void ws.data.speaking.then(() => ws.close());
  };
  const open = async () =>
    Array.from({ length: N }, () => {
      const ws: RelaySocket = { data: { speaking: Promise.resolve() }, readyState: 1, closed: () => {}, send: () => 1, close: () => queueMicrotask(() => ws.closed()) };
      return ws;
    });
  return rounds(open, (ws) => {
    message(ws, JSON.stringify({ type: "text", text: TEXT }));
    message(ws, JSON.stringify({ type: "close" }));
  });
}

const relayMicros = await relay();
const routerMicros = await router();
const line = (what: string, relay: number, router: number) =>
  `  ${what}: plain relay's JavaScript ${relay.toFixed(1)} µs, router ${router.toFixed(1)} µs: the router's own work +${(router - relay).toFixed(1)} µs (${(router / relay).toFixed(1)}×)`;
console.log(`voxroute hot path in process (no network): ${N} sessions at once, main-thread CPU per session, median of ${ROUNDS} rounds`);
console.log(line("session start (admission to ready, its hold written)", relayMicros.start, routerMicros.start));
console.log(line("utterance (text frame to the close, settled)", relayMicros.utterance, routerMicros.utterance));
process.exit(0);
