// bun run bench:upgrades — the main-thread CPU of one WebSocket upgrade, 200 at once: a plain Bun
// server, an empty Elysia `.ws()` route (bench/upgrade-floors.ts), and the router's `/v1/tts`
// (bench/bench-server.ts; BENCH_AB_DIR adds another checkout's). Each client waits for the first
// frame (the router's `ready`), so a party's figure is handshake to first frame; the closes after
// it are not measured. BENCH_ROUNDS runs (default 7), parties' order rotating; medians printed.
import { cpuDuring, type Proc, spawnBun, spawnRouter } from "./lib/procs.ts";
import { median } from "./lib/stats.ts";
import { FAKE_OPENAI_KEY } from "../test/fakes/openai.ts";

const N = Number(process.env.BENCH_HOT_SESSIONS ?? 200);
const rounds = Number(process.env.BENCH_ROUNDS ?? 7);
const fake = await spawnBun(["test/fakes/openai-server.ts"]);
const routerEnv = { OPENAI_API_KEY: FAKE_OPENAI_KEY, OPENAI_BASE_URL: fake.info.url };

interface Party {
  name: string;
  proc: Proc;
  path: string;
  auth: Record<string, string>;
}
const party = (name: string, proc: Proc, path = "/v1/tts?model=tts-1&voice=alloy"): Party => ({
  name,
  proc,
  path,
  auth: proc.info.key ? { Authorization: `Bearer ${proc.info.key}` } : {},
});
const parties: Party[] = [
  party("bare Bun", await spawnBun(["bench/upgrade-floors.ts"], { UPGRADE_FLOOR: "bare" })),
  party("empty Elysia .ws()", await spawnBun(["bench/upgrade-floors.ts"], { UPGRADE_FLOOR: "elysia" })),
  party("router /v1/tts", await spawnRouter("upgrades", routerEnv)),
];
// BENCH_PROF=<dir>: a --cpu-prof-md of a router measured alone (its profile written when it stops).
if (process.env.BENCH_PROF) {
  await parties[2].proc.stop();
  parties.splice(0, 3, party("router /v1/tts, profiled", await spawnRouterProfiled(process.env.BENCH_PROF)));
}
if (process.env.BENCH_AB_DIR) {
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const env = { PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", DATABASE_URL: `sqlite://${join(mkdtempSync(join(tmpdir(), "bench-upgrades-ab-")), "db.sqlite")}`, ...routerEnv };
  parties.push(party("other checkout's router", await spawnBun(["bench/bench-server.ts"], env, process.env.BENCH_AB_DIR)));
}

async function spawnRouterProfiled(dir: string): Promise<Proc> {
  const { mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const database = `sqlite://${join(mkdtempSync(join(tmpdir(), "bench-upgrades-prof-")), "db.sqlite")}`;
  return spawnBun(["--cpu-prof-md", `--cpu-prof-dir=${dir}`, "bench/bench-server.ts"], { PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", DATABASE_URL: database, ...routerEnv });
}

/** n sockets opened at once, each until its first frame; the server's main-thread CPU over that, per socket. Then all closed. */
async function burst(p: Party): Promise<number> {
  const url = `${p.proc.info.url.replace(/^http/, "ws")}${p.path}`;
  const sockets: WebSocket[] = [];
  const run = await cpuDuring(p.proc.proc.pid, () =>
    Promise.all(
      Array.from(
        { length: N },
        () =>
          new Promise<void>((resolve, reject) => {
            const ws = new WebSocket(url, { headers: p.auth } as never);
            sockets.push(ws);
            ws.onmessage = () => resolve();
            ws.onclose = (e) => reject(new Error(`${p.name}: closed ${e.code} ${e.reason}`));
          }),
      ),
    ),
  );
  await Promise.all(
    sockets.map((ws) => {
      ws.onclose = null;
      const closed = new Promise((resolve) => ws.addEventListener("close", resolve));
      ws.close();
      return closed;
    }),
  );
  await Bun.sleep(100);
  return run.main / N;
}

for (let i = 0; i < 3; i++) for (const p of parties) await burst(p); // warm: the first rounds pay for compiling the path
const cpu = parties.map((): number[] => []);
for (let i = 0; i < rounds; i++) {
  for (let k = 0; k < parties.length; k++) {
    const at = (i + k) % parties.length;
    cpu[at].push(await burst(parties[at]));
  }
  console.log(`run ${i + 1}: ${parties.map((p, k) => `${p.name} ${cpu[k][i].toFixed(0)} µs`).join(", ")}`);
}
console.log(`median of ${rounds}, main-thread CPU per upgrade (${N} at once, to the first frame): ${parties.map((p, k) => `${p.name} ${median(cpu[k]).toFixed(0)} µs`).join(", ")}`);
for (const p of [...parties.map((p) => p.proc), fake]) await p.stop();
process.exit(0);
