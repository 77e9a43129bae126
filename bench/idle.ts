// bun run bench:idle — what idle sessions cost the router in memory: N sessions opened and left
// open (TTS on the trivial in-process provider; cloud STT on the Deepgram fake, so each also holds
// an upstream socket), the router's resident memory read from /proc before and after, every
// party in its own process. Open files are capped at 20,000 a process here: a cloud STT session
// holds two (client and upstream), so STT stops short of 10,000 and is extrapolated per session.
import { readFileSync } from "node:fs";
import { FAKE_DEEPGRAM_KEY } from "../test/fakes/deepgram.ts";
import { TEST_MODEL } from "../test/fakes/fixed-pcm-provider.ts";
import { spawnBun, spawnRouter } from "./lib/procs.ts";

const TTS_SESSIONS = Number(process.env.BENCH_IDLE_TTS ?? 10_000);
const STT_SESSIONS = Number(process.env.BENCH_IDLE_STT ?? 9_000);
const OPENING_AT_ONCE = 500;

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

const deepgram = await spawnBun(["test/fakes/deepgram-server.ts"]);
const router = await spawnRouter("idle", {
  DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY,
  DEEPGRAM_BASE_URL: deepgram.info.url,
  // Idle is what is measured: the sessions must not time out meanwhile.
  TTS_IDLE_TIMEOUT_MS: "0",
  STT_IDLE_TIMEOUT_MS: "0",
});
const pid = router.proc.pid;
const headers = { Authorization: `Bearer ${router.info.key}` };
const ws = router.info.url.replace(/^http/, "ws");

/** Opens `n` sessions, `OPENING_AT_ONCE` at a time, each until the frame that says it is ready. */
async function openAll(url: string, n: number, ready: string): Promise<WebSocket[]> {
  const open: WebSocket[] = [];
  for (let i = 0; i < n; i += OPENING_AT_ONCE) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(OPENING_AT_ONCE, n - i) }, () => {
        const socket = new WebSocket(url, { headers } as never);
        return new Promise<WebSocket>((resolve, reject) => {
          socket.onmessage = (e) => typeof e.data === "string" && e.data.includes(ready) && resolve(socket);
          socket.onclose = (e) => reject(new Error(`session closed while opening: ${e.code} ${e.reason}`));
        });
      }),
    );
    open.push(...batch);
  }
  return open;
}

async function measure(name: string, url: string, n: number, ready: string): Promise<void> {
  await Bun.sleep(1000);
  const before = rssMiB(pid);
  const t0 = performance.now();
  const sockets = await openAll(url, n, ready);
  const opened = performance.now() - t0;
  await Bun.sleep(3000); // settle: holds written, buffers released
  const after = rssMiB(pid);
  const perSession = ((after - before) * 1024) / n;
  const at10k = before + (perSession * 10_000) / 1024;
  console.log(
    `${name.padEnd(22)} ${String(n).padStart(6)} open in ${(opened / 1000).toFixed(1)} s: router RSS ${before.toFixed(0)} → ${after.toFixed(0)} MiB, ` +
      `${perSession.toFixed(1)} KiB per session${n < 10_000 ? `, ≈ ${at10k.toFixed(0)} MiB at 10,000` : ""} (target < 1024 MiB at 10,000)`,
  );
  for (const s of sockets) s.close();
  await Bun.sleep(2000);
}

console.log(`voxroute idle sessions benchmark; router, client and upstream in separate processes; ${navigator.hardwareConcurrency} cores`);
await measure("TTS (/v1/tts)", `${ws}/v1/tts?model=${TEST_MODEL}&provider=fixed`, TTS_SESSIONS, "session_ready");
await measure("cloud STT (Deepgram)", `${ws}/v1/stt?model=nova-3&audio_format=pcm_16000`, STT_SESSIONS, "stt.session.started");
await router.stop();
await deepgram.stop();
