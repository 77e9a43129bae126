// bun run bench:stt
// (a) Router VAD capacity: how many concurrent real-time 16 kHz streams the audio workers (one per
//     core) sustain before they fall behind. Each stream sends a 20 ms frame every 20 ms of wall
//     time for 5 s of speech-like audio; a trial is sustained when every stream's last decision
//     arrives within 250 ms of its last frame. Each level runs three trials and is sustained when
//     their median is; levels rise until one is not.
// (b) Per-request overhead of the router on the local recognizer: commit → final transcript
//     through /v1/stt (WebSocket, session, events) vs the same recognizer called directly, as
//     paired differences, measured in one run.
// (c) Relay throughput on a realtime upstream, client, router and upstream each in its own
//     process: sessions each send frames as fast as they can and every frame is answered; frames
//     per second through the router (normalized events, and event_format=provider), through a
//     plain Bun relay (bench/plain-stt-relay.ts: the floor) and connected directly.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_VAD } from "../src/audio/vad.ts";
import { AudioPool, type AudioLane } from "../src/pools/audio-pool.ts";
import { createKey } from "../test/helpers/accounts.ts";
import { loadConfig } from "../src/config.ts";
import { startServer } from "../src/server.ts";
import { concat, frames, silence, speak } from "../test/helpers/speech.ts";
import { spawnBun } from "./lib/procs.ts";
import { median, paired, percentile, spread } from "./lib/stats.ts";

const cores = navigator.hardwareConcurrency;
const FRAME_MS = 20;
const SECONDS = 5;

// Speech with pauses, looped to SECONDS: the VAD does real work, not just silence.
const speech = concat([speak("Thank you very much for your help."), silence(600), speak("I would like a cup of coffee."), silence(600)]);
const loop = concat(Array.from({ length: Math.ceil((SECONDS * 16000) / speech.length) }, () => speech)).subarray(0, SECONDS * 16000);
const frameSamples = 16 * FRAME_MS;

async function vadTrial(pool: AudioPool, streams: number): Promise<{ worst: number; p50: number }> {
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
  return { worst: percentile(lag, 100), p50: percentile(lag, 50) };
}

const dir = mkdtempSync(join(tmpdir(), "bench-stt-"));

async function vadCapacity(): Promise<void> {
  console.log(`(a) router VAD: real-time 16 kHz streams, ${cores} audio workers`);
  const pool = new AudioPool(cores, { perWorker: 1, queue: 0, waitMs: 0 }); // the router VAD only
  await vadTrial(pool, 10); // warm the model in every worker
  let best = 0;
  for (const streams of [100, 200, 300, 400, 500, 600, 800]) {
    const trials = [await vadTrial(pool, streams), await vadTrial(pool, streams), await vadTrial(pool, streams)];
    const worst = median(trials.map((t) => t.worst));
    const sustained = worst <= 250;
    console.log(
      `  ${String(streams).padStart(4)} streams: last-decision lag, median of 3 trials: p50 ${median(trials.map((t) => t.p50)).toFixed(1)} ms, worst ${worst.toFixed(1)} ms ` +
        `(trials: ${trials.map((t) => t.worst.toFixed(0)).join(", ")} ms) → ${sustained ? "sustained" : "falls behind"}`,
    );
    if (!sustained) break;
    best = streams;
  }
  console.log(`  sustained: ${best} streams = ${Math.round(best / cores)} per core (target ≥ 200 per core)`);
  await pool.close();
}

async function localOverhead(): Promise<void> {
  console.log("(b) local recognizer: commit → final transcript, router (/v1/stt) vs direct (audio worker)");
  const server = await startServer(loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", DATABASE_URL: `sqlite://${join(dir, "db.sqlite")}` }));
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
  console.log(`  router ${spread(routerMs)} | direct ${spread(directMs)} | added (paired) ${spread(paired(routerMs, directMs))} | ratio p50 ${(median(routerMs) / median(directMs)).toFixed(2)}`);
  await direct.close();

  await server.stop(0);
}

async function relayThroughput(): Promise<void> {
  console.log("(c) relay throughput on a realtime upstream (client, router, upstream: separate processes)");
  const FRAMES = Number(process.env.BENCH_FRAMES ?? 2000);
  const relayUpstream = await spawnBun(["test/fakes/relay-upstream-server.ts"]);
  const plain = await spawnBun(["bench/plain-stt-relay.ts"], { UPSTREAM_URL: relayUpstream.info.url });
  const router = await spawnBun(["bench/bench-server.ts"], {
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    DATABASE_URL: `sqlite://${join(dir, "relay.sqlite")}`,
    RELAY_UPSTREAM_URL: relayUpstream.info.url,
  });
  /** `sessions` sockets each send FRAMES 20 ms frames at once; frames per second until every frame is answered. */
  async function throughput(url: string, headers: Record<string, string>, sessions: number, answer: (data: unknown) => boolean, ready?: string): Promise<number> {
    const sockets = await Promise.all(
      Array.from({ length: sessions }, () => {
        const ws = new WebSocket(url, { headers } as never);
        ws.binaryType = "arraybuffer";
        return new Promise<WebSocket>((resolve) => {
          if (ready) ws.onmessage = (e) => typeof e.data === "string" && e.data.includes(ready) && resolve(ws);
          else ws.onopen = () => resolve(ws);
        });
      }),
    );
    const frame = new Uint8Array(640);
    const t0 = performance.now();
    await Promise.all(
      sockets.map(
        (ws) =>
          new Promise<void>((resolve) => {
            let answered = 0;
            ws.onmessage = (e) => answer(e.data) && ++answered === FRAMES && resolve();
            for (let i = 0; i < FRAMES; i++) ws.send(frame);
          }),
      ),
    );
    const fps = (sessions * FRAMES) / ((performance.now() - t0) / 1000);
    for (const ws of sockets) ws.close();
    return fps;
  }
  const routerUrl = `${router.info.url.replace("http", "ws")}/v1/stt?model=relay-1&audio_format=pcm_16000`;
  const auth = { Authorization: `Bearer ${router.info.key}` };
  const binary = (d: unknown) => typeof d !== "string";
  const modes: [string, (n: number) => Promise<number>][] = [
    ["direct", (n) => throughput(relayUpstream.info.url, {}, n, binary)],
    ["plain relay", (n) => throughput(plain.info.url.replace("http", "ws"), {}, n, binary)],
    ["router, provider events", (n) => throughput(`${routerUrl}&event_format=provider`, auth, n, binary)],
    ["router, normalized", (n) => throughput(routerUrl, auth, n, (d) => typeof d === "string" && d.includes("stt.transcript.final"), "stt.session.started")],
  ];
  for (const [, run] of modes) await run(1); // warm every path
  // Rounds run every mode once in turn, and each ratio is taken within its round: on a shared
  // machine the load moves between rounds more than between the modes of one round.
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
  for (const sessions of [1, 10, 50]) {
    const fps = new Map<string, number[]>(modes.map(([name]) => [name, []]));
    for (let round = 0; round < ROUNDS; round++) for (const [name, run] of modes) fps.get(name)!.push(await run(sessions));
    const floor = fps.get("plain relay")!;
    const ratios = (f: number[]) => f.map((x, i) => x / floor[i]!);
    const range = (r: number[]) => `${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)}`;
    console.log(
      `  ${String(sessions).padStart(3)} sessions × ${FRAMES} frames, median of ${ROUNDS} rounds: ` +
        [...fps]
          .map(([name, f]) => `${name} ${Math.round(median(f))} frames/s${name.startsWith("router") ? ` (${median(ratios(f)).toFixed(2)}× plain relay, rounds ${range(ratios(f))})` : ""}`)
          .join(" | "),
    );
  }
  await Promise.all([router.stop(), plain.stop(), relayUpstream.stop()]);
}

/** BENCH_PARTS: which parts to run (a: VAD capacity, b: local recognizer, c: relay throughput). */
const PARTS = new Set((process.env.BENCH_PARTS ?? "a,b,c").split(","));
console.log(`voxroute STT benchmark; ${cores} cores`);
if (PARTS.has("a")) await vadCapacity();
if (PARTS.has("b")) await localOverhead();
if (PARTS.has("c")) await relayThroughput();
