// bun run bench:cache — time to first audio of a `/v1/tts` utterance played from the router's TTS
// cache versus synthesized by its provider (Flite in the engine workers, and the OpenAI fake over
// HTTP), paired: each round speaks a new sentence once (a miss: the provider makes it) and then
// again in a new session (a hit: no upstream call). The clock starts when the text leaves the
// client on an open session and stops at the first audio byte. Also: the memory the cache holds
// per minute of cached audio (its own byte count over the PCM it keeps).
import { createKey } from "../test/helpers/accounts.ts";
import { startTestServer } from "../test/helpers/server.ts";
import { startFakeOpenAi } from "../test/fakes/openai.ts";
import { openAiAt } from "../test/fakes/server-env.ts";
import { paired, percentile, spread } from "./lib/stats.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const fake = startFakeOpenAi();
const server = await startTestServer({ ...openAiAt(fake), TTS_CACHE_BYTES: String(256 * 1024 * 1024), TTS_WORKERS: "1" });
const { key, tenantId } = await createKey(server.ctx.database, "bench");
await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000_000, type: "adjustment", description: "bench funds" });

/** One session speaking `text`: ms from the text leaving to the first audio byte, and the PCM bytes. */
async function session(query: string, text: string): Promise<{ ttfa: number; bytes: number; rate: number }> {
  const ws = new WebSocket(`${server.wsUrl("/v1/tts")}?${query}`, { headers: { Authorization: `Bearer ${key}` } } as any);
  ws.binaryType = "arraybuffer";
  return new Promise((resolve, reject) => {
    let t0 = 0;
    let ttfa = 0;
    let bytes = 0;
    let rate = 0;
    ws.onmessage = (e) => {
      if (typeof e.data !== "string") {
        if (!ttfa) ttfa = performance.now() - t0;
        bytes += (e.data as ArrayBuffer).byteLength;
        return;
      }
      const ev = JSON.parse(e.data);
      if (ev.type === "service.tts_audio_started") rate = ev.sample_rate;
      if (ev.type === "service.tts_session_ready") {
        t0 = performance.now();
        ws.send(JSON.stringify({ type: "text", text }));
        ws.send(JSON.stringify({ type: "close" }));
      }
    };
    ws.onclose = (e) => (e.code === 1000 ? resolve({ ttfa, bytes, rate }) : reject(new Error(`closed ${e.code} ${e.reason}`)));
  });
}

const PROVIDERS: [string, string][] = [
  ["flite (embedded)", "model=flite&voice=slt&format=pcm"],
  ["OpenAI fake (HTTP)", "model=tts-1&voice=alloy&format=pcm"],
];

let cachedSeconds = 0;
console.log(`${ROUNDS} rounds per provider; a new sentence each round, spoken twice (miss, then hit); ms, p50 / p99`);
for (const [name, query] of PROVIDERS) {
  const miss: number[] = [];
  const hit: number[] = [];
  const before = fake.speech.length;
  for (let i = 0; i < ROUNDS; i++) {
    const text = `Your order number ${i + 1000} of ${name.length} boxes has shipped today.`;
    const made = await session(query, text);
    miss.push(made.ttfa);
    cachedSeconds += made.bytes / 2 / made.rate;
    hit.push((await session(query, text)).ttfa);
  }
  const upstream = fake.speech.length - before;
  const saved = paired(miss, hit);
  console.log(
    `${name.padEnd(20)} provider ${spread(miss)}   cache ${spread(hit)}   saved p50 ${percentile(saved, 50).toFixed(2)} ms   provider/cache p50 ${(percentile(miss, 50) / percentile(hit, 50)).toFixed(1)}x${name.startsWith("OpenAI") ? `   fake requests ${upstream} for ${2 * ROUNDS} sessions` : ""}`,
  );
}
const held = (await server.ctx.metrics.ttsCacheBytes.get()).values.find((v) => v.labels.tier === "memory")?.value ?? 0;
console.log(
  `memory: ${(held / 1024 / 1024).toFixed(2)} MiB for ${(cachedSeconds / 60).toFixed(2)} min of cached PCM = ${(held / 1024 / 1024 / (cachedSeconds / 60)).toFixed(2)} MiB per cached minute`,
);
await server.stop(0);
fake.stop();
process.exit(0);
