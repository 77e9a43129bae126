// bun run bench:stt
// (a) Router VAD capacity: how many concurrent real-time 16 kHz streams the audio workers (one per
//     core) sustain before they fall behind. Each stream sends a 20 ms frame every 20 ms of wall
//     time for 5 s of speech-like audio; a level is sustained when every stream's last decision
//     arrives within 250 ms of its last frame (the workers kept up with real time).
// (b) Per-request overhead of the router on the local recognizer: commit → final transcript
//     through /v1/stt (WebSocket, session, events) vs the same recognizer called directly, as
//     added milliseconds and a ratio, measured in one run.
// (c) Per-frame overhead on one realtime upstream on loopback: a 20 ms audio frame's round trip to
//     it and its answer back, through the router in the normalized mode (answer mapped to an
//     stt.transcript event), through the router with event_format=provider (relayed as is), and
//     connected directly.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_VAD } from "../src/audio/vad.ts";
import { AudioPool, type AudioLane } from "../workers/audio-pool.ts";
import { createKey } from "../src/accounts/keys.ts";
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { RelayProvider, relayCatalogue, startRelayUpstream } from "../test/fakes/relay-upstream.ts";
import { concat, frames, silence, speak } from "../test/helpers/speech.ts";

const cores = navigator.hardwareConcurrency;
const FRAME_MS = 20;
const SECONDS = 5;
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

// Speech with pauses, looped to SECONDS: the VAD does real work, not just silence.
const speech = concat([speak("Thank you very much for your help."), silence(600), speak("I would like a cup of coffee."), silence(600)]);
const loop = concat(Array.from({ length: Math.ceil((SECONDS * 16000) / speech.length) }, () => speech)).subarray(0, SECONDS * 16000);
const frameSamples = 16 * FRAME_MS;

async function vadLevel(pool: AudioPool, streams: number): Promise<{ sustained: boolean; p50: number; p99: number }> {
  const lag: number[] = [];
  const done: Promise<void>[] = [];
  const lanes = Array.from({ length: streams }, () => {
    let lastSent = 0;
    let resolve!: () => void;
    done.push(new Promise((r) => (resolve = r)));
    const lane = pool.open({ rate: 16000, vad: DEFAULT_VAD, autoCommit: true, interim: false }, (m) => {
      if (m.ev === "ended") {
        lag.push(performance.now() - lastSent);
        resolve();
      }
    });
    return { lane, mark: () => (lastSent = performance.now()) };
  });
  const start = performance.now();
  for (let i = 0; i * frameSamples < loop.length; i++) {
    const due = start + i * FRAME_MS;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const frame = loop.subarray(i * frameSamples, (i + 1) * frameSamples);
    for (const s of lanes) {
      s.lane.audio(new Uint8Array(frame.slice().buffer));
      s.mark();
    }
  }
  for (const s of lanes) s.lane.end();
  await Promise.all(done);
  return { sustained: pct(lag, 100) <= 250, p50: pct(lag, 50), p99: pct(lag, 99) };
}

console.log(`voxroute STT benchmark; ${cores} cores`);
console.log(`(a) router VAD: real-time 16 kHz streams, ${cores} audio workers`);
const pool = new AudioPool(cores, { perWorker: 1, queue: 0, waitMs: 0 }); // the router VAD only
await vadLevel(pool, 10); // warm the model in every worker
let best = 0;
for (const streams of [100, 200, 300, 400, 500, 600]) {
  const r = await vadLevel(pool, streams);
  console.log(`  ${String(streams).padStart(4)} streams: last-decision lag p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms → ${r.sustained ? "sustained" : "falls behind"}`);
  if (!r.sustained) break;
  best = streams;
}
console.log(`  sustained: ${best} streams = ${Math.round(best / cores)} per core (target ≥ 150 per core)`);
await pool.close();

console.log("(b) local recognizer: commit → final transcript, router (/v1/stt) vs direct (audio worker)");
const dir = mkdtempSync(join(tmpdir(), "bench-stt-"));
const upstream = startRelayUpstream();
const server = await startServer(loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", DATABASE_URL: `sqlite://${join(dir, "db.sqlite")}` }), {
  extra: { catalogue: relayCatalogue(), providers: [], sttProviders: [new RelayProvider(upstream.url)] },
});
const { key, tenantId } = await createKey(server.ctx.database, "bench");
await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000_000, type: "adjustment", description: "bench" });
const utterance = frames(concat([speak("Good morning everyone."), silence(200)]));

async function viaRouter(): Promise<number> {
  const ws = new WebSocket(`${server.url.replace("http", "ws")}/v1/stt?model=pocketsphinx-en-us&audio_format=pcm_16000&commit_strategy=manual&interim_results=false`, {
    headers: { Authorization: `Bearer ${key}` },
  } as any);
  await new Promise((r) => (ws.onopen = r));
  return new Promise((resolve) => {
    let t0 = 0;
    ws.onmessage = (e) => {
      const ev = JSON.parse(String(e.data));
      if (ev.type === "stt.session.started") {
        for (const f of utterance) ws.send(f);
        setTimeout(() => {
          t0 = performance.now();
          ws.send(JSON.stringify({ type: "stt.audio.commit" }));
        }, 300);
      } else if (ev.type === "stt.transcript.final") {
        resolve(performance.now() - t0);
        ws.close();
      }
    };
  });
}

const direct = new AudioPool(1, { perWorker: 1, queue: 0, waitMs: 0 });
async function viaDirect(): Promise<number> {
  let t0 = 0;
  let lane: AudioLane | undefined; // assigned before the worker's first answer arrives
  return new Promise((resolve) => {
    void direct
      .openRecognizer({ rate: 16000, autoCommit: false, interim: false }, (m) => {
        if (m.ev === "opened") {
          for (const f of frames(concat([speak("Good morning everyone."), silence(200)]))) lane!.audio(f);
          setTimeout(() => {
            t0 = performance.now();
            lane!.commit();
          }, 300);
        } else if (m.ev === "final") {
          resolve(performance.now() - t0);
          lane!.drop();
        }
      })
      .then((l) => (lane = l));
  });
}

const routerMs: number[] = [];
const directMs: number[] = [];
for (let i = 0; i < 15; i++) {
  routerMs.push(await viaRouter());
  directMs.push(await viaDirect());
}
const r50 = pct(routerMs, 50);
const d50 = pct(directMs, 50);
console.log(
  `  router p50 ${r50.toFixed(2)} ms, p99 ${pct(routerMs, 99).toFixed(2)} ms | direct p50 ${d50.toFixed(2)} ms, p99 ${pct(directMs, 99).toFixed(2)} ms | added p50 ${(r50 - d50).toFixed(2)} ms | ratio ${(r50 / d50).toFixed(2)}`,
);
await direct.close();

console.log("(c) one realtime upstream: a frame's round trip and its answer back");
/** Sends a frame, waits for the answer `done` recognizes, `count` times. */
async function roundTrips(url: string, headers: Record<string, string>, count: number, done: (data: unknown) => boolean): Promise<number[]> {
  const ws = new WebSocket(url, { headers } as any);
  ws.binaryType = "arraybuffer";
  await new Promise((r) => (ws.onopen = r));
  await Bun.sleep(50);
  const times: number[] = [];
  const frame = new Uint8Array(640);
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      ws.onmessage = (e) => done(e.data) && resolve();
      ws.send(frame);
    });
    times.push(performance.now() - t0);
  }
  ws.close();
  return times.slice(100);
}
const base = `${server.url.replace("http", "ws")}/v1/stt?model=relay-1&audio_format=pcm_16000`;
const auth = { Authorization: `Bearer ${key}` };
const binary = (d: unknown) => typeof d !== "string";
const modes = {
  normalized: await roundTrips(base, auth, 2000, (d) => typeof d === "string" && d.includes("stt.transcript.final")),
  provider: await roundTrips(`${base}&event_format=provider`, auth, 2000, binary),
  direct: await roundTrips(upstream.url, {}, 2000, binary),
};
const direct50 = pct(modes.direct, 50);
for (const [mode, t] of Object.entries(modes)) {
  console.log(
    `  ${mode.padEnd(10)} p50 ${pct(t, 50).toFixed(3)} ms, p99 ${pct(t, 99).toFixed(3)} ms | added to direct p50 ${(pct(t, 50) - direct50).toFixed(3)} ms | ratio ${(pct(t, 50) / direct50).toFixed(2)}`,
  );
}
await server.stop(0);
upstream.stop();
