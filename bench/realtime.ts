// bun run bench:realtime — a realtime conversation through the router vs the same STT, application
// and TTS driven directly, every party in its own process: the Deepgram fake (Flux STT, whose turns
// come from the audio itself, and Aura TTS, real Flite speech), the ConversationRelay fake (`/echo`),
// the router on SQLite, and this client, which plays the caller.
// Each conversation sends Flite's "Thank you very much for your help." in real time, then silence.
// From the end of the caller's speech to the first audio byte of the answer at the client, split
// into: end of turn (Flux's silence wait, its hangover, and the final transcript), application
// (final transcript → its first token) and TTS (first token → first audio). Router and direct run
// alternately with the same audio; "added" is the percentile of paired differences
// (bench/lib/stats.ts), at 1/20/100 concurrent conversations, all starting at once (their turns end
// in the same 20 ms) or spread over 1 s.
import { FAKE_DEEPGRAM_KEY } from "../test/fakes/deepgram.ts";
import { concat, frames, silence, speak, spokenSpans } from "../test/helpers/speech.ts";
import { auraSpeaker, directHops, playRealTime } from "./lib/paced-sockets.ts";
import { routerConversation } from "./lib/realtime-caller.ts";
import { spawnBun } from "./lib/procs.ts";
import { arrivals, levels, PATTERNS, paired, percentile } from "./lib/stats.ts";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LEVELS = levels("1,20,100");
/** Samples wanted per level and path: rounds of `n` conversations until there are this many. */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const PIECES = [silence(200), speak("Thank you very much for your help."), silence(1500)];
const AUDIO = frames(concat(PIECES));
/** The frame whose sending ends the caller's speech. */
const SPEECH_END_FRAME = Math.ceil(spokenSpans(PIECES)[0]![1] / 20) - 1;

const deepgram = await spawnBun(["test/fakes/deepgram-server.ts"]);
const app = await spawnBun(["test/fakes/conversation-relay-app-server.ts"]);
const router = await spawnBun([...(process.env.BENCH_PROF ? ["--cpu-prof-md", `--cpu-prof-dir=${process.env.BENCH_PROF}`] : []), "bench/bench-server.ts"], {
  PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "silent",
  DATABASE_URL: `sqlite://${join(mkdtempSync(join(tmpdir(), "bench-realtime-")), "db.sqlite")}`,
  DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY,
  DEEPGRAM_BASE_URL: deepgram.info.url,
  REALTIME_ALLOW_PRIVATE_UPSTREAMS: "true",
});
const dgWs = deepgram.info.ws!;
const auth = { Authorization: `Token ${FAKE_DEEPGRAM_KEY}` };

const created = await fetch(`${router.info.url}/v1/realtime/profiles`, {
  method: "POST",
  headers: { Authorization: `Bearer ${router.info.key}`, "content-type": "application/json" },
  body: JSON.stringify({
    name: "bench",
    pipeline: { stt: { model: "flux-general-en" }, tts: { model: "aura-2", voice: "thalia-en" }, upstream: { url: `${app.info.url}/echo` } },
  }),
});
if (created.status !== 201) throw new Error(`profile: ${created.status} ${await created.text()}`);
const profileId = ((await created.json()) as { id: string }).id;

/** Times (performance.now) of one conversation's milestones, as the caller's side sees them. */
interface Milestones {
  speechEnd: number;
  final: number;
  token: number;
  audio: number;
}

/** The caller through the router's /v1/realtime, `after` ms from now. */
async function viaRouter(after = 0): Promise<Milestones> {
  if (after) await Bun.sleep(after);
  const call = await routerConversation(`${router.info.url.replace("http", "ws")}/v1/realtime?profile_id=${profileId}`, { Authorization: `Bearer ${router.info.key}` });
  const answer = call.nextAnswer();
  const speechEnd = await playRealTime(call.ws, AUDIO, SPEECH_END_FRAME);
  const m = { speechEnd, ...(await answer) };
  call.close();
  return m;
}

/** The same caller, with this process doing the router's hops: Flux, the application, Aura. */
async function viaDirect(after = 0): Promise<Milestones> {
  if (after) await Bun.sleep(after);
  const hops = await directHops(`${dgWs}/v2/listen?model=flux-general-en&encoding=linear16&sample_rate=16000`, auth, `${app.info.url}/echo`);
  const { stt, appWs } = hops;
  const m = { speechEnd: 0, final: 0, token: 0, audio: 0 };
  let closeTts = () => {};
  const answered = new Promise<void>((resolve, reject) => {
    const tts = auraSpeaker(
      `${dgWs}/v1/speak?model=aura-2-thalia-en&encoding=linear16&sample_rate=16000`,
      auth,
      () => {
        m.audio ||= performance.now();
        resolve();
      },
      reject,
    );
    closeTts = tts.close;
    stt.onmessage = (e) => {
      const ev = JSON.parse(String(e.data));
      if (ev.type === "TurnInfo" && ev.event === "EndOfTurn" && !m.final) {
        m.final = performance.now();
        appWs.send(JSON.stringify({ type: "prompt", voicePrompt: ev.transcript, last: true }));
      }
    };
    appWs.onmessage = (e) => {
      const msg = JSON.parse(String(e.data));
      if (msg.type !== "text") return;
      m.token ||= performance.now();
      tts.speak(msg.token, msg.last);
    };
    stt.onclose = (e) => !m.audio && reject(new Error(`flux closed ${e.code}`));
  });
  m.speechEnd = await playRealTime(stt, AUDIO, SPEECH_END_FRAME);
  await answered;
  hops.close();
  closeTts();
  return m;
}

const splits = {
  "end of turn": (m: Milestones) => m.final - m.speechEnd,
  application: (m: Milestones) => m.token - m.final,
  "TTS first audio": (m: Milestones) => m.audio - m.token,
  total: (m: Milestones) => m.audio - m.speechEnd,
};

const f = (x: number) => `${x.toFixed(1)}`;

console.log(`voxroute realtime benchmark; ${navigator.hardwareConcurrency} cores; end of caller speech → first answer audio (ms)`);
// Unmeasured: the fakes synthesize and cache the answer's speech, and both paths open their first sockets.
await viaRouter();
await viaDirect();
for (const n of LEVELS)
  for (const pattern of n === 1 ? PATTERNS.slice(0, 1) : PATTERNS) {
    const routed: Milestones[] = [];
    const direct: Milestones[] = [];
    // Rounds alternate which path goes first, so that neither always meets the other's leftovers;
    // both paths of a round start their conversations at the same offsets.
    for (let round = 0; routed.length < SAMPLES; round++) {
      const offsets = arrivals(n, pattern.windowMs);
      const [first, second] = round % 2 === 0 ? [viaRouter, viaDirect] : [viaDirect, viaRouter];
      const a = await Promise.all(offsets.map((o) => first(o)));
      const b = await Promise.all(offsets.map((o) => second(o)));
      routed.push(...(round % 2 === 0 ? a : b));
      direct.push(...(round % 2 === 0 ? b : a));
    }
    console.log(`  ${n} concurrent conversations${n === 1 ? "" : `, ${pattern.name}`}, ${routed.length} samples each:`);
    for (const [name, of] of Object.entries(splits)) {
      const r = routed.map(of);
      const d = direct.map(of);
      const added = paired(r, d);
      const p99 = added.length >= 200 ? `, p99 ${f(percentile(added, 99))}` : "";
      console.log(
        `    ${name.padEnd(16)} router p50 ${f(percentile(r, 50)).padStart(7)} | direct p50 ${f(percentile(d, 50)).padStart(7)} | added p50 ${f(percentile(added, 50))}, p90 ${f(percentile(added, 90))}${p99}`,
      );
    }
  }

await Promise.all([router.stop(), app.stop(), deepgram.stop()]);
