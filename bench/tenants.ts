// bun run bench:tenants — one tenant's flood against its limits, and what another tenant sees of
// it. Every party in its own process: the router (bench/bench-server.ts), tenant A's flood
// (bench/tenant-flood.ts) and this client, tenant B. Tenant A has `max_sessions` 50 and opens
// 1,000 /v1/tts sessions in one instant; tenant B (no limits) opens its sessions spread over the
// same second and speaks one text on each. B's time to first audio (from the socket's open to its
// first audio frame) is compared between rounds with A's flood and rounds without, alternated.
// Then the router's main-thread CPU (/proc/<pid>/task/<pid>/schedstat) per refused upgrade (A's
// 50 held, 1,000 more refused) against per served session (B's: open, audio, close).
// Both counting places: this instance's memory (no REDIS_URL), and Redis (BENCH_REDIS_URL, default
// the machine's). BENCH_ROUNDS (5), BENCH_B_SESSIONS (100 per round).
import { cpuDuring, spawnBun, spawnRouter } from "./lib/procs.ts";
import { arrivals, atEach, percentile } from "./lib/stats.ts";
import { ttsFirstAudio } from "./lib/tts-socket.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const B_SESSIONS = Number(process.env.BENCH_B_SESSIONS ?? 100);
const FLOOD = 1000;
const LIMIT = 50;
const TEXT = "A tenant of its own, whatever the others do.";
const QUERY = "/v1/tts?model=test%2Fecho&provider=fixed";

/** B's sessions at their offsets from `start` (epoch ms): each one's time to first audio, in ms. */
async function tenantB(wsUrl: string, key: string, start: number): Promise<number[]> {
  await Bun.sleep(Math.max(0, start - Date.now()));
  const offsets = arrivals(B_SESSIONS, 1000);
  return atEach(offsets, () => ttsFirstAudio(wsUrl, key, TEXT));
}

/** Tenant A's flood at `start`, in its own process: its tally. */
async function flood(wsUrl: string, key: string, count: number, start?: number) {
  const env = { URL: wsUrl, KEY: key, COUNT: String(count), ...(start ? { AT: String(start) } : {}) };
  const proc = Bun.spawn(["bun", "bench/tenant-flood.ts"], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "inherit" });
  const text = await new Response(proc.stdout).text();
  await proc.exited;
  return JSON.parse(text) as { opened: number; refused: number; failed: number };
}

const ms = (x: number) => `${x.toFixed(1)} ms`;

for (const [name, env] of [
  ["this instance's counts (no REDIS_URL)", {}],
  ["Redis", { REDIS_URL: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379" }],
] as const) {
  const router = await spawnRouter("tenants", { ...env, TTS_WORKERS: "1", BENCH_LIMITED_TENANT: JSON.stringify({ max_sessions: LIMIT }) });
  const wsUrl = router.info.url!.replace(/^http/, "ws") + QUERY;
  const { key, limitedKey } = router.info as { key: string; limitedKey: string };
  const pid = router.proc.pid;
  await tenantB(wsUrl, key, Date.now()); // warm-up
  const alone: number[] = [];
  const flooded: number[] = [];
  const tallies: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // Alternated, so that drift on a shared machine falls on both sides.
    for (const withFlood of round % 2 ? [true, false] : [false, true]) {
      const start = Date.now() + 300;
      if (!withFlood) alone.push(...(await tenantB(wsUrl, key, start)));
      else {
        const [ttfa, tally] = await Promise.all([tenantB(wsUrl, key, start), flood(wsUrl, limitedKey, FLOOD, start)]);
        flooded.push(...ttfa);
        tallies.push(`${tally.opened}/${tally.refused}/${tally.failed}`);
      }
    }
  }
  console.log(`${name}: tenant B, ${B_SESSIONS} sessions over 1 s × ${ROUNDS} rounds each way`);
  console.log(`  B alone           time to first audio p50 ${ms(percentile(alone, 50))}  p99 ${ms(percentile(alone, 99))}`);
  console.log(`  B with A's flood  time to first audio p50 ${ms(percentile(flooded, 50))}  p99 ${ms(percentile(flooded, 99))}`);
  console.log(`  difference        p50 ${ms(percentile(flooded, 50) - percentile(alone, 50))}  p99 ${ms(percentile(flooded, 99) - percentile(alone, 99))}`);
  console.log(`  A's flood per round, opened/refused/failed: ${tallies.join(", ")}`);

  // A holds its 50; each of 1,000 more is refused.
  const holder = await spawnBun(["bench/tenant-flood.ts"], { URL: wsUrl, KEY: limitedKey, COUNT: String(LIMIT), HOLD: "1" });
  const refused = await cpuDuring(pid, () => flood(wsUrl, limitedKey, FLOOD));
  await holder.stop();
  const served = await cpuDuring(pid, () => tenantB(wsUrl, key, Date.now()));
  console.log(
    `  router main-thread CPU: ${(refused.main / refused.result.refused).toFixed(0)} µs per refused upgrade (${refused.result.refused} refused), ${(served.main / B_SESSIONS).toFixed(0)} µs per served session (${B_SESSIONS}: upgrade, admission, audio, settle, close)`,
  );
  await router.stop();
}
process.exit(0);
