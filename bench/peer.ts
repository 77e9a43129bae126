// bun run bench:peer — voxroute against the peer a user would pick instead: the same OpenAI speech
// request (POST /audio/speech, PCM) through voxroute's /oai/audio/speech (SQLite, a funded key),
// through the Portkey open-source gateway (bench/portkey-server.ts, under Bun), and to the OpenAI
// fake directly, every party in its own process. Time to the first audio byte; "added" is the
// percentile of paired differences against the fake called directly (bench/lib/stats.ts): one
// request at a time, then rounds of 100 all at once (burst) and spread over 1 s.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAKE_OPENAI_KEY } from "../test/fakes/openai.ts";
import { spawnBun } from "./lib/procs.ts";
import { arrivals, at, PATTERNS, paired, percentile } from "./lib/stats.ts";

const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const ROUND = 100;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BODY = JSON.stringify({ model: "tts-1", voice: "alloy", input: "The router should add almost no latency to this sentence.", response_format: "pcm" });

const fake = await spawnBun(["test/fakes/openai-server.ts"]);
const voxroute = await spawnBun(["bench/bench-server.ts"], {
  PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "silent",
  DATABASE_URL: `sqlite://${join(mkdtempSync(join(tmpdir(), "bench-peer-")), "db.sqlite")}`,
  OPENAI_API_KEY: FAKE_OPENAI_KEY,
  OPENAI_BASE_URL: fake.info.url,
});
const portkey = await spawnBun(["bench/portkey-server.ts"]);

interface Party {
  name: string;
  url: string;
  headers: Record<string, string>;
}
const json = { "content-type": "application/json" };
const direct: Party = { name: "direct", url: `${fake.info.url}/audio/speech`, headers: { ...json, authorization: `Bearer ${FAKE_OPENAI_KEY}` } };
const peers: Party[] = [
  { name: "voxroute", url: `${voxroute.info.url}/oai/audio/speech`, headers: { ...json, authorization: `Bearer ${voxroute.info.key}` } },
  {
    name: "Portkey",
    url: `${portkey.info.url}/v1/audio/speech`,
    headers: { ...json, authorization: `Bearer ${FAKE_OPENAI_KEY}`, "x-portkey-provider": "openai", "x-portkey-custom-host": fake.info.url },
  },
];

/** Time to the first audio byte of one request; the body is read to its end. */
async function speak(party: Party): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(party.url, { method: "POST", headers: party.headers, body: BODY });
  if (!res.ok) throw new Error(`${party.name}: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  const first = await reader.read();
  const ttfb = performance.now() - t0;
  if (first.done || !first.value.byteLength) throw new Error(`${party.name}: no audio`);
  while (!(await reader.read()).done);
  return ttfb;
}

function round(party: Party, offsets: number[]): Promise<number[]> {
  return Promise.all(offsets.map((offset) => new Promise<number>((resolve, reject) => at(offset, () => speak(party).then(resolve, reject)))));
}

const f = (x: number) => `${x >= 0 ? "+" : ""}${x.toFixed(2)} ms`;
const added = (xs: number[]) => `p50 ${f(percentile(xs, 50))}  p90 ${f(percentile(xs, 90))}  p99 ${xs.length >= 200 ? f(percentile(xs, 99)) : "n/a"}`;
const plain = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(2)} ms  p99 ${xs.length >= 200 ? `${percentile(xs, 99).toFixed(2)} ms` : "n/a"}`;

function report(title: string, d: number[], runs: Map<string, number[]>): void {
  console.log(`${title} (${d.length} samples)`);
  console.log(`  direct     ${plain(d)}`);
  for (const [name, xs] of runs) console.log(`  ${name.padEnd(10)} ${plain(xs)}   added over direct (paired): ${added(paired(xs, d))}`);
}

console.log(`voxroute vs Portkey ${"1.15.2"} (under Bun ${Bun.version}): OpenAI speech to the OpenAI fake, time to first audio byte; ${navigator.hardwareConcurrency} cores`);
for (const party of [direct, ...peers]) await round(party, [0, 0, 0, 0, 0, 0, 0, 0]);

// One at a time: each sample i is the three parties in turn, so a pair shares the machine's moment.
const seq = { d: [] as number[], runs: new Map(peers.map((p) => [p.name, [] as number[]])) };
for (let i = 0; i < SEQUENTIAL; i++) {
  seq.d.push(await speak(direct));
  for (const p of peers) seq.runs.get(p.name)!.push(await speak(p));
}
report("one request at a time", seq.d, seq.runs);

for (const pattern of PATTERNS) {
  const d: number[] = [];
  const runs = new Map(peers.map((p) => [p.name, [] as number[]]));
  for (let r = 0; r < ROUNDS; r++) {
    const offsets = arrivals(ROUND, pattern.windowMs);
    d.push(...(await round(direct, offsets)));
    for (const p of peers) runs.get(p.name)!.push(...(await round(p, offsets)));
  }
  report(`${pattern.name} × ${ROUND}, ${ROUNDS} rounds`, d, runs);
}

await Promise.all([voxroute.stop(), portkey.stop(), fake.stop()]);
