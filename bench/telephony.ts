// bun run bench:telephony — a phone call into a realtime profile through the router vs the same
// STT, application and TTS driven directly, every party in its own process: the Deepgram fake
// (Flux STT hearing µ-law at 8 kHz, whose turns come from the audio itself, and Aura TTS, real
// Flite speech), the ConversationRelay fake (`/echo`), the router on SQLite, and this client, which
// plays the carrier. Through the router a call is what Twilio does: the signed voice webhook, the
// TwiML's stream opened, `connected` and `start` with the credential, the caller's µ-law in JSON
// `media` frames every 20 ms. Directly, this process does the router's hops: Flux (`mulaw`,
// 8 kHz), the application, Aura (PCM at 8 kHz, made µ-law and cut into 20 ms frames here).
// Each call sends Flite's "Thank you very much for your help." as µ-law in real time, then
// silence. Measured: from the end of the caller's speech to the first `media` frame of the answer
// (directly: the answer's first 20 ms of µ-law). Router and direct run alternately with the same
// audio, which goes first alternating by round; "added" is the percentile of paired differences
// (bench/lib/stats.ts), at 1/20/100 calls spread over 1 s. Per-call memory: the router's RSS
// (/proc) at its highest during a round's calls minus just before them, over the calls.
import { mulaw } from "alawmulaw";
import { FAKE_DEEPGRAM_KEY } from "../test/fakes/deepgram.ts";
import { toPhoneAudio } from "../test/fakes/phone-caller.ts";
import { twilioCall, twilioRings } from "../test/fakes/twilio-caller.ts";
import { rssKiB, rssGrowthDuring } from "../test/helpers/rss.ts";
import { concat, silence, speak, spokenSpans } from "../test/helpers/speech.ts";
import { auraSpeaker, directHops, opened, playRealTime, socket } from "./lib/paced-sockets.ts";
import { spawnBun, spawnRouter } from "./lib/procs.ts";
import { arrivals, levels, PATTERNS, paired, percentile } from "./lib/stats.ts";

const LEVELS = levels("1,20,100");
/** Samples wanted per level and path: rounds of `n` calls until there are this many. */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 20);
const SPREAD = PATTERNS.find((p) => p.windowMs === 1000)!;
const PIECES = [silence(500), speak("Thank you very much for your help."), silence(1500)];
const ULAW = toPhoneAudio(concat(PIECES));
const FRAMES = Array.from({ length: Math.ceil(ULAW.length / 160) }, (_, i) => ULAW.subarray(i * 160, (i + 1) * 160));
/** The frame whose sending ends the caller's speech. */
const SPEECH_END_FRAME = Math.ceil(spokenSpans(PIECES)[0]![1] / 20) - 1;
const AUTH_TOKEN = "bench-twilio-auth-token";

const deepgram = await spawnBun(["test/fakes/deepgram-server.ts"]);
const app = await spawnBun(["test/fakes/conversation-relay-app-server.ts"]);
const router = await spawnRouter("telephony", { DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY, DEEPGRAM_BASE_URL: deepgram.info.url, REALTIME_ALLOW_PRIVATE_UPSTREAMS: "true" });
const dgWs = deepgram.info.ws!;
const auth = { Authorization: `Token ${FAKE_DEEPGRAM_KEY}` };
const asTenant = { Authorization: `Bearer ${router.info.key}`, "content-type": "application/json" };

async function created(path: string, body: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${router.info.url}${path}`, { method: "POST", headers: asTenant, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}
const profile = await created("/v1/realtime/profiles", {
  name: "bench phone",
  pipeline: { stt: { model: "flux-general-en" }, tts: { model: "aura-2", voice: "thalia-en" }, upstream: { url: `${app.info.url}/echo` } },
});
const { webhook_url: webhookUrl } = await created(`/v1/realtime/profiles/${profile.id}/phone-links`, { carrier: "twilio", twilio_auth_token: AUTH_TOKEN });

interface Milestones {
  speechEnd: number;
  media: number;
}

/** A Twilio call through the router, `after` ms from now. */
async function viaRouter(after = 0): Promise<Milestones> {
  if (after) await Bun.sleep(after);
  const call = twilioCall();
  const answer = await twilioRings(webhookUrl, AUTH_TOKEN, call);
  if (!answer.stream) throw new Error(`no stream: ${answer.status} ${answer.body}`);
  const streamSid = `MZ${crypto.randomUUID().replaceAll("-", "")}`;
  const ws = socket(answer.stream.url);
  await opened(ws);
  const m = { speechEnd: 0, media: 0 };
  const answered = new Promise<void>((resolve, reject) => {
    ws.onmessage = (e) => {
      if (JSON.parse(String(e.data)).event !== "media") return;
      m.media ||= performance.now();
      resolve();
    };
    ws.onclose = (e) => reject(new Error(`closed ${e.code} ${e.reason}`));
  });
  ws.send(JSON.stringify({ event: "connected", protocol: "Call", version: "1.0.0" }));
  const start = {
    streamSid,
    accountSid: "AC0",
    callSid: call.callSid,
    tracks: ["inbound"],
    customParameters: answer.stream.parameters,
    mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
  };
  ws.send(JSON.stringify({ event: "start", sequenceNumber: "1", start, streamSid }));
  let chunk = 0;
  m.speechEnd = await playRealTime(ws, FRAMES, SPEECH_END_FRAME, (bytes) =>
    JSON.stringify({ event: "media", streamSid, media: { track: "inbound", chunk: String(++chunk), timestamp: String(chunk * 20), payload: Buffer.from(bytes).toString("base64") } }),
  );
  await answered;
  ws.onclose = null;
  ws.send(JSON.stringify({ event: "stop", streamSid, stop: { accountSid: "AC0", callSid: call.callSid } }));
  ws.close();
  return m;
}

/** The same caller, with this process doing the router's hops: Flux, the application, Aura, µ-law frames. */
async function viaDirect(after = 0): Promise<Milestones> {
  if (after) await Bun.sleep(after);
  const hops = await directHops(`${dgWs}/v2/listen?model=flux-general-en&encoding=mulaw&sample_rate=8000`, auth, `${app.info.url}/echo`);
  const { stt, appWs } = hops;
  const m = { speechEnd: 0, media: 0 };
  let closeTts = () => {};
  const answered = new Promise<void>((resolve, reject) => {
    let pcm = new Uint8Array(0);
    const tts = auraSpeaker(
      `${dgWs}/v1/speak?model=aura-2-thalia-en&encoding=linear16&sample_rate=8000`,
      auth,
      (audio) => {
        if (m.media) return;
        pcm = Buffer.concat([pcm, new Uint8Array(audio)]);
        if (pcm.length < 320) return;
        // The carrier's first frame: 20 ms of the answer as µ-law, base64 in JSON.
        const first = mulaw.encode(new Int16Array(pcm.buffer, pcm.byteOffset, 160));
        JSON.stringify({ event: "media", streamSid: "MZ0", media: { payload: Buffer.from(first).toString("base64") } });
        m.media = performance.now();
        resolve();
      },
      reject,
    );
    closeTts = tts.close;
    stt.onmessage = (e) => {
      const ev = JSON.parse(String(e.data));
      if (ev.type === "TurnInfo" && ev.event === "EndOfTurn") appWs.send(JSON.stringify({ type: "prompt", voicePrompt: ev.transcript, last: true }));
    };
    appWs.onmessage = (e) => {
      const msg = JSON.parse(String(e.data));
      if (msg.type === "text") tts.speak(msg.token, msg.last);
    };
    stt.onclose = (e) => !m.media && reject(new Error(`flux closed ${e.code}`));
  });
  m.speechEnd = await playRealTime(stt, FRAMES, SPEECH_END_FRAME);
  await answered;
  hops.close();
  closeTts();
  return m;
}

const routerRss = () => rssKiB(router.proc.pid);

const f = (x: number) => `${x.toFixed(1)}`;

console.log(`voxroute telephony benchmark; ${navigator.hardwareConcurrency} cores; end of caller speech → first answer media frame (ms)`);
// Unmeasured: the fakes synthesize and cache the answer's speech, and both paths open their first sockets.
await viaRouter();
await viaDirect();
for (const n of LEVELS) {
  const routed: Milestones[] = [];
  const direct: Milestones[] = [];
  const perCallMiB: number[] = [];
  // Rounds alternate which path goes first, so that neither always meets the other's leftovers;
  // both paths of a round start their calls at the same offsets.
  for (let round = 0; routed.length < SAMPLES; round++) {
    const offsets = arrivals(n, SPREAD.windowMs);
    const routerRound = async () => {
      const { result, growthMiB } = await rssGrowthDuring(router.proc.pid, () => Promise.all(offsets.map((o) => viaRouter(o))), 50);
      perCallMiB.push(growthMiB / n);
      return result;
    };
    const directRound = () => Promise.all(offsets.map((o) => viaDirect(o)));
    if (round % 2 === 0) {
      routed.push(...(await routerRound()));
      direct.push(...(await directRound()));
    } else {
      direct.push(...(await directRound()));
      routed.push(...(await routerRound()));
    }
  }
  const r = routed.map((m) => m.media - m.speechEnd);
  const d = direct.map((m) => m.media - m.speechEnd);
  const added = paired(r, d);
  const p99 = added.length >= 200 ? `, p99 ${f(percentile(added, 99))}` : "";
  console.log(`  ${n} call${n === 1 ? "" : "s"}${n === 1 ? "" : `, ${SPREAD.name}`}, ${routed.length} samples each:`);
  console.log(`    router p50 ${f(percentile(r, 50))} | direct p50 ${f(percentile(d, 50))} | added p50 ${f(percentile(added, 50))}, p90 ${f(percentile(added, 90))}${p99}`);
  console.log(`    router RSS growth per call: median ${f(percentile(perCallMiB, 50))} MiB over ${perCallMiB.length} round(s) (RSS now ${f(routerRss() / 1024)} MiB)`);
}

await Promise.all([router.stop(), app.stop(), deepgram.stop()]);
