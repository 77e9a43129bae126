// bun run bench:tts — time to first audio and total time through the router versus calling the
// same provider directly (in this process), at 1/50/200/500 concurrent sessions, all at once
// (burst) and spread over 1 s, measured in one run. Both sides start the clock when the text leaves
// the caller on an already-open session, so the difference is what the router adds on the
// streaming path (framing, session, socket, backpressure): "added" is the percentile of paired
// differences (bench/lib/stats.ts). The router's session setup (connect, handshake, auth, provider
// accept) is printed beside it. A cloud upstream and the plain-relay floor: bench:upstream.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EnginePool } from "../src/pools/engine-pool.ts";
import { LocalEngineProvider } from "../src/providers/local-engine-provider.ts";
import type { TtsProvider } from "../src/providers/types.ts";
import { FixedPcmProvider, TEST_MODEL } from "../test/fakes/fixed-pcm-provider.ts";
import { arrivals, at, levels, PATTERNS, paired, percentile, spread } from "./lib/stats.ts";
import { SERVER_RUNTIME } from "./lib/procs.ts";
import { ttsFirstAudio } from "./lib/tts-socket.ts";

const LEVELS = levels();
const TEXT = "The router should add almost no latency to this sentence.";
const root = new URL("..", import.meta.url).pathname;
const picoDir = process.env.PICO_VOICES_DIR || new URL("../../shared/models/svox-pico-lang", import.meta.url).pathname;

interface Timing {
  /** Connection + handshake + auth + provider accepted: reported, not compared (direct has none). */
  setup: number;
  /** From the text leaving the caller to the first audio byte. */
  ttfa: number;
  /** From the text leaving the caller to the end of the audio. */
  total: number;
}

/** Opens sessions until each is ready, then sends the text on all of them at once. */
async function viaRouter(offsets: number[], base: string, key: string, query: string): Promise<Timing[]> {
  const n = offsets.length;
  const sessions = await Promise.all(
    Array.from({ length: n }, () => {
      const t0 = performance.now();
      const ws = new WebSocket(`${base}/v1/tts?${query}`, { headers: { Authorization: `Bearer ${key}` } } as any);
      ws.binaryType = "arraybuffer";
      return new Promise<{ ws: WebSocket; setup: number }>((resolve, reject) => {
        ws.onmessage = (e) => {
          if (typeof e.data === "string" && JSON.parse(e.data).type === "service.tts_session_ready") resolve({ ws, setup: performance.now() - t0 });
        };
        ws.onclose = (e) => reject(new Error(`closed ${e.code} ${e.reason}`));
      });
    }),
  );
  return Promise.all(
    sessions.map(
      ({ ws, setup }, i) =>
        new Promise<Timing>((resolve, reject) => {
          let ttfa = 0;
          ws.onmessage = (e) => {
            if (!ttfa && typeof e.data !== "string") ttfa = performance.now() - t0;
          };
          ws.onclose = (e) => (e.code === 1000 ? resolve({ setup, ttfa, total: performance.now() - t0 }) : reject(new Error(`closed ${e.code}`)));
          let t0 = 0;
          at(offsets[i], () => {
            t0 = performance.now();
            ws.send(JSON.stringify({ type: "text", text: TEXT }));
            ws.send(JSON.stringify({ type: "close" }));
          });
        }),
    ),
  );
}

/** Opens provider streams, then writes the text to all of them at once. */
async function direct(offsets: number[], provider: TtsProvider, model: string, voice?: string): Promise<Timing[]> {
  const streams = await Promise.all(offsets.map(() => provider.open({ model, voice, format: "pcm", options: {} })));
  return Promise.all(
    streams.map(async (stream, i) => {
      await new Promise<void>((resolve) => at(offsets[i], resolve));
      const t0 = performance.now();
      let ttfa = 0;
      stream.write(TEXT);
      stream.end();
      for await (const ev of stream) if (!ttfa && ev.type === "audio") ttfa = performance.now() - t0;
      return { setup: 0, ttfa, total: performance.now() - t0 };
    }),
  );
}

function report(name: string, n: number, router: Timing[], dir: Timing[]) {
  const row = (metric: "ttfa" | "total") => {
    const r = router.map((t) => t[metric]);
    const d = dir.map((t) => t[metric]);
    return `${metric.padEnd(5)} router ${spread(r)} | direct ${spread(d)} | added (paired) ${spread(paired(r, d))} | ratio p50 ${(percentile(r, 50) / percentile(d, 50)).toFixed(2)}`;
  };
  console.log(`${name} × ${n}   (router session setup: ${spread(router.map((t) => t.setup))})`);
  console.log(`  ${row("ttfa")}`);
  console.log(`  ${row("total")}`);
}

const dir = mkdtempSync(join(tmpdir(), "voxroute-bench-"));
const server = Bun.spawn(["bun", "bench/bench-server.ts"], {
  cwd: root,
  env: { ...SERVER_RUNTIME, ...process.env, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", DATABASE_URL: `sqlite://${join(dir, "db.sqlite")}`, PICO_VOICES_DIR: picoDir },
  stdout: "pipe",
  stderr: "inherit",
});
const reader = server.stdout.getReader();
const { value } = await reader.read();
const { url, key } = JSON.parse(new TextDecoder().decode(value)) as { url: string; key: string };
const base = url.replace(/^http/, "ws");

const pool = new EnginePool(2, { picoVoicesDir: picoDir, picoVoicesUrl: "" });
// Flite stops at 200 sessions: past that its two engine workers, not the router, set every figure.
const cases: { name: string; query: string; provider: TtsProvider; model: string; voice?: string; levels: number[] }[] = [
  { name: "trivial fixed-PCM provider", query: `model=${TEST_MODEL}&provider=fixed`, provider: new FixedPcmProvider("fixed", 10), model: "echo", levels: LEVELS },
  { name: "Flite (slt)", query: "model=flite&voice=slt", provider: new LocalEngineProvider("flite", "flite", pool), model: "flite", voice: "slt", levels: LEVELS.filter((n) => n <= 200) },
];

console.log(`voxroute TTS benchmark: router (separate process, real WebSocket) vs direct provider call; ${navigator.hardwareConcurrency} cores`);
for (const c of cases) {
  // Warm both paths (engine load, JIT) before measuring.
  await viaRouter([0, 0, 0, 0], base, key, c.query);
  await direct([0, 0, 0, 0], c.provider, c.model, c.voice);
  for (const pattern of PATTERNS) {
    for (const n of c.levels) {
      const offsets = arrivals(n, pattern.windowMs);
      const router = await viaRouter(offsets, base, key, c.query);
      const dir = await direct(offsets, c.provider, c.model, c.voice);
      report(`${c.name}, ${pattern.name}`, n, router, dir);
    }
  }
}
// The compatibility surfaces against the native channel, each timed from the request leaving the
// caller (connection, auth and admission included) to the first audio byte.
const SURFACE_LEVELS = LEVELS.filter((n) => n <= 200);
const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
async function firstByte(res: Promise<Response>, t0: number): Promise<number> {
  const reader = (await res).body!.getReader();
  await reader.read();
  const first = performance.now() - t0;
  while (!(await reader.read()).done);
  return first;
}
const surfaces: { name: string; once: () => Promise<number> }[] = [
  {
    name: "native /v1/tts",
    once: () => ttsFirstAudio(`${base}/v1/tts?model=${TEST_MODEL}&provider=fixed`, key, TEXT),
  },
  {
    name: "/oai/audio/speech",
    once: () => {
      const t0 = performance.now();
      return firstByte(
        fetch(`${url}/oai/audio/speech`, { method: "POST", headers, body: JSON.stringify({ model: TEST_MODEL, input: TEXT, response_format: "pcm", provider: { only: ["fixed"] } }) }),
        t0,
      );
    },
  },
  {
    name: "/el …/stream",
    once: () => {
      const t0 = performance.now();
      return firstByte(fetch(`${url}/el/v1/text-to-speech/any/stream?output_format=pcm_16000`, { method: "POST", headers, body: JSON.stringify({ text: TEXT, model_id: `fixed/echo` }) }), t0);
    },
  },
];
console.log("\ncompatibility surfaces vs the native channel (trivial fixed-PCM provider), time to first audio byte from the request leaving the caller:");
for (const s of surfaces) await Promise.all([0, 1, 2, 3].map(() => s.once()));
for (const n of SURFACE_LEVELS) {
  const times = new Map<string, number[]>();
  for (const s of surfaces) times.set(s.name, await Promise.all(Array.from({ length: n }, () => s.once())));
  const native = times.get("native /v1/tts")!;
  for (const [name, t] of times) {
    if (name === "native /v1/tts") continue;
    console.log(
      `  ${name.padEnd(18)} × ${String(n).padStart(3)}: ${spread(t)} | native ${spread(native)} | added (paired) ${spread(paired(t, native))} | ratio p50 ${(percentile(t, 50) / percentile(native, 50)).toFixed(2)}`,
    );
  }
}

await pool.close();
server.kill("SIGTERM");
await server.exited;
