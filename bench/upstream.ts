// bun run bench:upstream — a cloud TTS provider through the router vs the same provider called
// directly: the OpenAI fake (its own process) as the upstream, the router as its own process.
// Time to first audio from the text leaving the caller: on an open /v1/tts session (router) vs
// a POST /v1/audio/speech (direct), at 1, 50 and 200 concurrent sessions, in one run.
// STT: event latency, from the audio frame that completes half a second (the Deepgram fake answers
// each half second with an interim Results) to that event arriving: through /v1/stt (normalized)
// vs straight to the fake; with the half second sent at once (a burst the relay must forward
// frame by frame) and paced as a live microphone sends it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKey } from "../src/accounts/keys.ts";
import { openDatabase } from "../src/db/open.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { FAKE_DEEPGRAM_KEY } from "../test/fakes/deepgram.ts";
import { FAKE_OPENAI_KEY } from "../test/fakes/openai.ts";

const LEVELS = (process.env.BENCH_LEVELS ?? "1,50,200").split(",").map(Number);
const TEXT = "The router should add almost no latency to this sentence.";
const root = new URL("..", import.meta.url).pathname;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function spawn(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn(["bun", ...args], { cwd: root, env: { ...process.env, ...env }, stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) text += new TextDecoder().decode((await reader.read()).value);
  return { proc, url: (JSON.parse(text.split("\n")[0]) as { url: string }).url };
}

const fake = await spawn(["test/fakes/openai-server.ts"], {});
const deepgram = await spawn(["test/fakes/deepgram-server.ts"], {});
const db = join(mkdtempSync(join(tmpdir(), "bench-upstream-")), "db.sqlite");
const router = await spawn(["bench/bench-server.ts"], {
  PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "silent",
  DATABASE_URL: `sqlite://${db}`,
  OPENAI_API_KEY: FAKE_OPENAI_KEY,
  OPENAI_BASE_URL: fake.url,
  DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY,
  DEEPGRAM_BASE_URL: deepgram.url,
});
const database = await openDatabase(`sqlite://${db}`);
const { key, tenantId } = await createKey(database, "bench-upstream");
await new Ledger(database).credit(tenantId, { credits: 1_000_000_000, type: "adjustment", description: "bench" });

/** Text leaves every session at the same instant (0), or at a random moment within the window. */
const after = (ms: number) => (ms ? Bun.sleep(ms) : Promise.resolve());

async function viaRouter(n: number, windowMs = 0): Promise<number[]> {
  const base = router.url.replace("http", "ws");
  const sockets = await Promise.all(
    Array.from({ length: n }, () => {
      const ws = new WebSocket(`${base}/v1/tts?model=tts-1&voice=alloy`, { headers: { Authorization: `Bearer ${key}` } } as any);
      ws.binaryType = "arraybuffer";
      return new Promise<WebSocket>((resolve) => (ws.onmessage = (e) => typeof e.data === "string" && e.data.includes("session_ready") && resolve(ws)));
    }),
  );
  return Promise.all(
    sockets.map(
      (ws) =>
        new Promise<number>((resolve) => {
          void after(Math.random() * windowMs).then(() => {
            const t0 = performance.now();
            let first = 0;
            ws.onmessage = (e) => {
              if (!first && typeof e.data !== "string") first = performance.now() - t0;
            };
            ws.onclose = () => resolve(first);
            ws.send(JSON.stringify({ type: "text", text: TEXT }));
            ws.send(JSON.stringify({ type: "close" }));
          });
        }),
    ),
  );
}

async function direct(n: number, windowMs = 0): Promise<number[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      await after(Math.random() * windowMs);
      const t0 = performance.now();
      const res = await fetch(`${fake.url}/audio/speech`, {
        method: "POST",
        headers: { authorization: `Bearer ${FAKE_OPENAI_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "tts-1", voice: "alloy", input: TEXT, response_format: "pcm" }),
      });
      const reader = res.body!.getReader();
      await reader.read();
      const first = performance.now() - t0;
      while (!(await reader.read()).done);
      return first;
    }),
  );
}

console.log(`voxroute upstream benchmark: OpenAI TTS (fake upstream, own process), router vs direct; ${navigator.hardwareConcurrency} cores`);
await viaRouter(4);
await direct(4);
for (const [pattern, windowMs] of [
  ["all at once", 0],
  ["spread over 1 s", 1000],
] as const) {
  for (const n of LEVELS) {
    const all = await viaRouter(n, n > 1 ? windowMs : 0);
    const r = all.filter((t) => t > 0);
    if (r.length < all.length) console.log(`  (${all.length - r.length} of ${n} router sessions got no audio)`);
    const d = await direct(n, n > 1 ? windowMs : 0);
    const ms = (x: number) => `${x.toFixed(2).padStart(8)} ms`;
    console.log(
      `TTS TTFA, ${pattern.padEnd(15)} × ${String(n).padStart(3)}: router p50 ${ms(pct(r, 50))} p99 ${ms(pct(r, 99))} | direct p50 ${ms(pct(d, 50))} p99 ${ms(pct(d, 99))} | ` +
        `added p50 ${ms(pct(r, 50) - pct(d, 50))} p99 ${ms(pct(r, 99) - pct(d, 99))} | ratio p50 ${(pct(r, 50) / pct(d, 50)).toFixed(2)}`,
    );
  }
}
/** Per session: send half a second of audio as 20 ms frames, time the last frame → the interim. */
async function sttLatency(url: string, headers: Record<string, string>, n: number, isInterim: (data: string) => boolean): Promise<number[]> {
  const sockets = await Promise.all(
    Array.from({ length: n }, () => {
      const ws = new WebSocket(url, { headers } as any);
      return new Promise<WebSocket>((resolve) => (ws.onopen = () => resolve(ws)));
    }),
  );
  await Bun.sleep(100); // sessions started (router: admitted and connected upstream)
  const times = await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<number>((resolve) => {
          let t0 = 0;
          ws.onmessage = (e) => typeof e.data === "string" && isInterim(e.data) && resolve(performance.now() - t0);
          for (let i = 0; i < 25; i++) {
            if (i === 24) t0 = performance.now();
            ws.send(new Uint8Array(640));
          }
        }),
    ),
  );
  for (const ws of sockets) ws.close();
  return times;
}
/**
 * Per session, as a live microphone: 20 ms frames every 20 ms for a second (phases spread over the
 * first frame), timing each frame that completes half a second → the interim it brings.
 */
async function sttRealTime(url: string, headers: Record<string, string>, n: number, isInterim: (data: string) => boolean): Promise<number[]> {
  const sockets = await Promise.all(
    Array.from({ length: n }, () => {
      const ws = new WebSocket(url, { headers } as any);
      return new Promise<WebSocket>((resolve) => (ws.onopen = () => resolve(ws)));
    }),
  );
  await Bun.sleep(100);
  const times: number[] = [];
  await Promise.all(
    sockets.map(
      (ws) =>
        new Promise<void>((resolve) => {
          let t0 = 0;
          let sent = 0;
          ws.onmessage = (e) => {
            if (t0 && typeof e.data === "string" && isInterim(e.data)) {
              times.push(performance.now() - t0);
              t0 = 0;
            }
          };
          setTimeout(() => {
            const timer = setInterval(() => {
              ws.send(new Uint8Array(640));
              if (++sent % 25 === 0) t0 = performance.now();
              if (sent === 50) {
                clearInterval(timer);
                setTimeout(resolve, 200);
              }
            }, 20);
          }, Math.random() * 20);
        }),
    ),
  );
  for (const ws of sockets) ws.close();
  return times;
}

const ROUTER_STT = `${router.url.replace("http", "ws")}/v1/stt?model=nova-3&audio_format=pcm_16000`;
const DIRECT_STT = `${deepgram.url.replace("http", "ws")}/v1/listen?model=nova-3&encoding=linear16&sample_rate=16000&interim_results=true`;
for (const [mode, measure] of [
  ["half a second at once", sttLatency],
  ["real time (20 ms frames)", sttRealTime],
] as const) {
  for (const n of LEVELS) {
    const r = await measure(ROUTER_STT, { Authorization: `Bearer ${key}` }, n, (d) => d.includes("stt.transcript.interim"));
    const d = await measure(DIRECT_STT, { Authorization: `Token ${FAKE_DEEPGRAM_KEY}` }, n, (x) => x.includes('"Results"'));
    const ms = (x: number) => `${x.toFixed(3).padStart(8)} ms`;
    console.log(
      `STT event, ${mode.padEnd(24)} × ${String(n).padStart(3)}: router p50 ${ms(pct(r, 50))} p99 ${ms(pct(r, 99))} | direct p50 ${ms(pct(d, 50))} p99 ${ms(pct(d, 99))} | ` +
        `added p50 ${ms(pct(r, 50) - pct(d, 50))} p99 ${ms(pct(r, 99) - pct(d, 99))} | ratio p50 ${(pct(r, 50) / pct(d, 50)).toFixed(2)}`,
    );
  }
}
await database.close();
router.proc.kill("SIGTERM");
fake.proc.kill("SIGTERM");
deepgram.proc.kill("SIGTERM");
await Promise.all([router.proc.exited, fake.proc.exited, deepgram.proc.exited]);
