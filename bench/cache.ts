// bun run bench:cache — time to first audio of a `/v1/tts` utterance played from the router's TTS
// cache versus synthesized by its provider (Flite in the engine workers, and the OpenAI fake over
// HTTP), paired: each round speaks a new sentence once (a miss: the provider makes it) and then
// again in a new session (a hit: no upstream call). The clock starts when the text leaves the
// client on an open session and stops at the first audio byte. Also: the memory the cache holds
// per minute of cached audio (its own byte count over the PCM it keeps).
// Then `/v1/realtime` conversations (the Deepgram fake's Flux hears Flite's speech, sent in real
// time; the ConversationRelay fake's `/repeats` answers): every second answer begins with the
// sentence the one before began with, so it is a miss on odd turns and a hit on even turns, paired
// within a conversation. Two clocks stop at the answer's first audio byte: one starts at the end of
// the caller's turn (`realtime.transcript.final` at the client), one at the answer's first token
// (`realtime.response.text`). The next turn starts once the answer's audio is done.
// BENCH_ROUNDS (40), BENCH_CONVERSATIONS (6, at once) and BENCH_TURNS (8, even) set the sample counts.
import { createKey } from "../test/helpers/accounts.ts";
import { startTestServer } from "../test/helpers/server.ts";
import { startFakeOpenAi } from "../test/fakes/openai.ts";
import { startFakeDeepgram } from "../test/fakes/deepgram.ts";
import { startFakeApp } from "../test/fakes/conversation-relay-app.ts";
import { deepgramAt, openAiAt } from "../test/fakes/server-env.ts";
import { concat, frames, silence, speak, spokenSpans } from "../test/helpers/speech.ts";
import { playRealTime } from "./lib/paced-sockets.ts";
import { type Answer, routerConversation } from "./lib/realtime-caller.ts";
import { paired, percentile, spread } from "./lib/stats.ts";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const CONVERSATIONS = Number(process.env.BENCH_CONVERSATIONS ?? 6);
const TURNS = 2 * Math.ceil(Number(process.env.BENCH_TURNS ?? 8) / 2);
const fake = startFakeOpenAi();
const deepgram = startFakeDeepgram();
const app = startFakeApp({ record: false });
const server = await startTestServer({ ...openAiAt(fake), ...deepgramAt(deepgram), REALTIME_ALLOW_PRIVATE_UPSTREAMS: "true", TTS_CACHE_BYTES: String(256 * 1024 * 1024), TTS_WORKERS: "1" });
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

function report(name: string, miss: number[], hit: number[], extra = ""): void {
  const saved = paired(miss, hit);
  console.log(
    `${name.padEnd(32)} provider ${spread(miss)}   cache ${spread(hit)}   saved p50 ${percentile(saved, 50).toFixed(2)} ms   provider/cache p50 ${(percentile(miss, 50) / percentile(hit, 50)).toFixed(1)}x${extra}`,
  );
}

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
  report(name, miss, hit, name.startsWith("OpenAI") ? `   fake requests ${upstream} for ${2 * ROUNDS} sessions` : "");
}
const held = (await server.ctx.metrics.ttsCacheBytes.get()).values.find((v) => v.labels.tier === "memory")?.value ?? 0;
console.log(
  `memory: ${(held / 1024 / 1024).toFixed(2)} MiB for ${(cachedSeconds / 60).toFixed(2)} min of cached PCM = ${(held / 1024 / 1024 / (cachedSeconds / 60)).toFixed(2)} MiB per cached minute`,
);

const PIECES = [silence(200), speak("Thank you very much for your help."), silence(1500)];
const AUDIO = frames(concat(PIECES));
const SPEECH_END_FRAME = Math.ceil(spokenSpans(PIECES)[0]![1] / 20) - 1;
const REALTIME: [string, { model: string; voice: string }][] = [
  ["flite (embedded)", { model: "flite", voice: "slt" }],
  ["OpenAI fake (HTTP)", { model: "tts-1", voice: "alloy" }],
];

/** One conversation of TURNS turns: the milestones of each answer. */
async function conversation(profileId: string): Promise<Answer[]> {
  const call = await routerConversation(`${server.wsUrl("/v1/realtime")}?profile_id=${profileId}`, { Authorization: `Bearer ${key}` });
  const answers: Answer[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    const answer = call.nextAnswer(true);
    await playRealTime(call.ws, AUDIO, SPEECH_END_FRAME);
    answers.push(await answer);
  }
  call.close();
  return answers;
}

const lookups = async () => {
  const sum = async (c: typeof server.ctx.metrics.ttsCacheHits) => (await c.get()).values.reduce((n, v) => n + v.value, 0);
  return { hits: await sum(server.ctx.metrics.ttsCacheHits), misses: await sum(server.ctx.metrics.ttsCacheMisses) };
};

console.log(
  `/v1/realtime: ${CONVERSATIONS} concurrent conversations of ${TURNS} turns per provider, odd turns' answers begin with a new sentence (provider), even turns' with the one before (cache); ms, p50 / p99`,
);
for (const [name, tts] of REALTIME) {
  const created = await fetch(`${server.url}/v1/realtime/profiles`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `cache ${tts.model}`, pipeline: { stt: { model: "flux-general-en" }, tts, upstream: { url: app.url("/repeats") } } }),
  });
  if (created.status !== 201) throw new Error(`profile: ${created.status} ${await created.text()}`);
  const { id } = (await created.json()) as { id: string };
  const before = await lookups();
  const answers = await Promise.all(Array.from({ length: CONVERSATIONS }, () => conversation(id)));
  const after = await lookups();
  const turns = (parity: number, of: (a: Answer) => number) => answers.flatMap((c) => c.filter((_, i) => i % 2 === parity).map(of));
  console.log(`  utterances: ${after.hits - before.hits} played from the cache, ${after.misses - before.misses} synthesized`);
  for (const [from, field] of [
    ["end of turn", "final"],
    ["first token", "token"],
  ] as const)
    report(
      `${name}, ${from}`,
      turns(0, (a) => a.audio - a[field]),
      turns(1, (a) => a.audio - a[field]),
    );
}
await server.stop(0);
fake.stop();
deepgram.stop();
app.stop();
process.exit(0);
