// bun run bench:failover — calls that outlive their provider. Every party in its own process: the
// OpenAI fake (TTS `tts-1`), the Deepgram fake (STT `nova-3`), the AssemblyAI fake (the STT
// fallback, `universal-streaming-english`), the ConversationRelay fake (`/echo`), the router on
// SQLite, and this client. TTS falls back to a second cloud provider, the ElevenLabs fake
// (`eleven_flash_v2_5`) in its own process, as a cloud voice's fallback is in a deployment; with
// BENCH_TTS_FALLBACK=flite, to the embedded Flite (voice `rms`) in the router's engine pool, the
// chain that keeps a call alive with no cloud provider left. Both TTS fakes stream speech at
// BENCH_SPEECH_SPEED times real time, so that a fault finds every /v1/tts stream under way.
// One run per fault: none (the reference), kill, hang, 500. Each run starts fresh processes and
// opens a first wave of sessions spread over 1 s — /v1/tts (sentences paced as an answer comes),
// /v1/stt and /v1/realtime conversations (turns of speech in real time, each committed) — then:
// - every Deepgram listen socket opened from the run's start plays the fault once it has had
//   FAULT_AFTER_S of audio (kill: cut; hang: read nothing more; 500: an error, close 1011);
// - at FAULT_AT_MS the OpenAI and Deepgram fakes break for good (kill: the port refuses and the open
//   connections are cut; hang: every request hangs; 500: every request is answered 500);
// - once GET /v1/providers shows both bindings down and the first wave has ended, a second wave as
//   large opens: what reaches the dead fakes while it runs (their arrival count) is sessions
//   waiting on a provider known to be down.
// Figures: sessions that ended normally; the audio gap a /v1/tts caller waited at the switch; final
// transcripts lost or repeated against the reference run; arrivals at the dead fakes after their
// circuits opened; books (the activity's characters and seconds against the clients' own count).
import { FAKE_ASSEMBLYAI_KEY } from "../test/fakes/assemblyai.ts";
import { FAKE_DEEPGRAM_KEY } from "../test/fakes/deepgram.ts";
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE } from "../test/fakes/elevenlabs.ts";
import { FAKE_OPENAI_KEY } from "../test/fakes/openai.ts";
import { conversation, type Kind, type Outcome, SENTENCES, sttSession, type Target, ttsSession } from "./lib/failover-clients.ts";
import { spawnBun, spawnRouter } from "./lib/procs.ts";
import { arrivals, spread } from "./lib/stats.ts";

const SIZES: Record<Kind, number> = {
  tts: Number(process.env.BENCH_TTS ?? 200),
  stt: Number(process.env.BENCH_STT ?? 16),
  conversation: Number(process.env.BENCH_CONVERSATIONS ?? 8),
};
const FAULTS = (process.env.BENCH_FAULTS ?? "none,kill,hang,500").split(",");
const FAULT_AT_MS = Number(process.env.BENCH_FAULT_AT_MS ?? 3500);
const FAULT_AFTER_S = Number(process.env.BENCH_FAULT_AFTER_S ?? 3.5);
/** The TTS fakes stream speech at this many times real time, as a provider sends it while it synthesizes: a fault then finds every /v1/tts session's audio under way. */
const SPEECH_SPEED = process.env.BENCH_SPEECH_SPEED ?? "4";
/** The router's timeouts, as it runs here (its defaults unless set). */
const TIMEOUTS = { PROVIDER_CONNECT_TIMEOUT_MS: process.env.PROVIDER_CONNECT_TIMEOUT_MS ?? "5000", UPSTREAM_IDLE_TIMEOUT_MS: process.env.UPSTREAM_IDLE_TIMEOUT_MS ?? "10000" };
const PERSISTENT = { kill: { kind: "refuse" }, hang: { kind: "hang" }, "500": { kind: "status500" } } as Record<string, object>;
const MID_STREAM = { kill: "kill", hang: "hang", "500": "error" } as Record<string, string>;
const enc = (x: unknown) => encodeURIComponent(JSON.stringify(x));
const TTS_FALLBACKS: Record<string, { model: string; voice: string }> = { elevenlabs: { model: "eleven_flash_v2_5", voice: FAKE_VOICE }, flite: { model: "flite", voice: "rms" } };
const TTS_FALLBACK_NAME = process.env.BENCH_TTS_FALLBACK ?? "elevenlabs";
const TTS_FALLBACK = TTS_FALLBACKS[TTS_FALLBACK_NAME];
if (!TTS_FALLBACK) throw new Error(`BENCH_TTS_FALLBACK must be one of ${Object.keys(TTS_FALLBACKS).join(", ")}`);
const TTS_QUERY = `model=tts-1&voice=alloy&format=pcm&fallbacks=${enc([TTS_FALLBACK])}`;
const STT_QUERY = `model=nova-3&audio_format=pcm_16000&fallbacks=${enc([{ model: "universal-streaming-english" }])}`;

const post = (url: string, body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
const arrivedAt = async (control: string) => ((await (await fetch(`${control}/arrivals`)).json()) as { arrivals: number }).arrivals;

interface Run {
  outcomes: Outcome[];
  /** Wave 2 only: opened after the circuits were seen open. */
  late: Outcome[];
  /** Arrivals at the broken fakes while the second wave ran. */
  deadArrivals: number;
  /** Arrivals at the broken fakes from the circuits' opening to the first wave's end: requests of sessions begun before it opened. */
  earlyArrivals: number;
  openedAfterMs?: number;
  /** When the fakes were broken (performance.now()). */
  brokenAt?: number;
  books: { characters: [number, number]; seconds: [number, number] };
  midStream: boolean;
}

async function run(fault: string): Promise<Run> {
  const openai = await spawnBun(["test/fakes/openai-server.ts"], { FAKE_SPEECH_SPEED: SPEECH_SPEED });
  const deepgram = await spawnBun(["test/fakes/deepgram-server.ts"]);
  const assemblyai = await spawnBun(["test/fakes/assemblyai-server.ts"]);
  const app = await spawnBun(["test/fakes/conversation-relay-app-server.ts"]);
  const elevenlabs = await spawnBun(["test/fakes/elevenlabs-server.ts"], { FAKE_SPEECH_SPEED: SPEECH_SPEED });
  await warm(elevenlabs.info.url);
  const router = await spawnRouter("failover", {
    OPENAI_API_KEY: FAKE_OPENAI_KEY,
    OPENAI_BASE_URL: openai.info.url,
    DEEPGRAM_API_KEY: FAKE_DEEPGRAM_KEY,
    DEEPGRAM_BASE_URL: deepgram.info.url,
    ASSEMBLYAI_API_KEY: FAKE_ASSEMBLYAI_KEY,
    ASSEMBLYAI_BASE_URL: assemblyai.info.url,
    ELEVENLABS_API_KEY: FAKE_ELEVENLABS_KEY,
    ELEVENLABS_BASE_URL: elevenlabs.info.url,
    REALTIME_ALLOW_PRIVATE_UPSTREAMS: "true",
    // No probe of a dead provider within a run: every arrival after the circuit opened is a session that waited on it.
    PROVIDER_COOLDOWN_MS: "600000",
    PROVIDER_COOLDOWN_MAX_MS: "600000",
    ...TIMEOUTS,
  });
  const { url, key } = router.info;
  const target: Target = { ws: url.replace(/^http/, "ws"), key };
  const auth = { Authorization: `Bearer ${key}`, "content-type": "application/json" };
  const created = await fetch(`${url}/v1/realtime/profiles`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({
      name: "failover",
      pipeline: {
        stt: { model: "nova-3", fallbacks: [{ model: "universal-streaming-english" }] },
        tts: { model: "tts-1", voice: "alloy", fallbacks: [TTS_FALLBACK] },
        upstream: { url: `${app.info.url}/echo` },
      },
    }),
  });
  if (created.status !== 201) throw new Error(`profile: ${created.status} ${await created.text()}`);
  const profileId = ((await created.json()) as { id: string }).id;
  const midStream = fault === "none" || (await post(`${deepgram.info.control}/mid-stream`, { kind: MID_STREAM[fault], afterSeconds: FAULT_AFTER_S })).ok;

  const wave = () => {
    const started: Promise<Outcome>[] = [];
    const go = (kind: Kind, start: () => Promise<Outcome>) => {
      for (const offset of arrivals(SIZES[kind], 1000)) started.push(Bun.sleep(offset).then(start));
    };
    go("tts", () => ttsSession(target, TTS_QUERY));
    go("stt", () => sttSession(target, STT_QUERY));
    go("conversation", () => conversation(target, profileId));
    return Promise.all(started);
  };

  const first = wave();
  await Bun.sleep(FAULT_AT_MS);
  let openedAfterMs: number | undefined;
  let brokenAt: number | undefined;
  if (fault !== "none") {
    const broken = performance.now();
    brokenAt = broken;
    await Promise.all([post(`${openai.info.control}/fault`, PERSISTENT[fault]), post(`${deepgram.info.control}/fault`, PERSISTENT[fault])]);
    while (openedAfterMs === undefined && performance.now() - broken < 30_000) {
      const h = await health(url);
      if (h.tts === "down" && h.stt === "down") openedAfterMs = performance.now() - broken;
      else await Bun.sleep(25);
    }
    if (openedAfterMs === undefined) console.log(`  (health after 30 s: ${JSON.stringify(await health(url))})`);
  }
  const deadNow = async () => (await arrivedAt(openai.info.control)) + (await arrivedAt(deepgram.info.control));
  const atOpen = await deadNow();
  const early = await first;
  // The second wave opens once the first has ended: what reaches the dead fakes then is the second wave's alone.
  const beforeLate = await deadNow();
  const late = await wave();
  const outcomes = [...early, ...late];
  const deadArrivals = (await deadNow()) - beforeLate;
  const books = await booksOf(url, key, outcomes);
  await Promise.all([router.stop(), openai.stop(), deepgram.stop(), assemblyai.stop(), app.stop(), elevenlabs.stop()]);
  return { outcomes, late, deadArrivals, earlyArrivals: beforeLate - atOpen, openedAfterMs, brokenAt, books, midStream };
}

/**
 * The fallback fake speaks, once before the run, the texts it will be given: the answer's sentences
 * and a conversation's answer (the echo of the fakes' transcript). It makes speech with Flite on
 * this machine's cores, on its event loop, and keeps it per text (as the OpenAI fake does from its
 * first sessions); cold, each first synthesis would stall every socket of the fake for ~100 ms at
 * the very moment of the switch, where a real provider synthesizes on its own machines.
 */
const WARM_TEXTS = [...SENTENCES, ...["thank you very much for your help", "Thank you very much for your help."].map((heard) => `You said: ${heard}`)];

async function warm(url: string): Promise<void> {
  for (const text of WARM_TEXTS) {
    const res = await fetch(`${url}/v1/text-to-speech/${FAKE_VOICE}/stream?output_format=pcm_24000`, {
      method: "POST",
      headers: { "xi-api-key": FAKE_ELEVENLABS_KEY, "content-type": "application/json" },
      body: JSON.stringify({ text, model_id: TTS_FALLBACKS.elevenlabs.model }),
    });
    if (!res.ok) throw new Error(`warming the ElevenLabs fake: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }
}

/** The health of the two bindings the faults break, as GET /v1/providers tells it. */
async function health(url: string): Promise<{ tts?: string; stt?: string }> {
  const { providers } = (await (await fetch(`${url}/v1/providers`)).json()) as { providers: Record<string, Record<"tts" | "stt", { id: string; health: { status: string } }[]>> };
  return { tts: providers.openai.tts.find((m) => m.id === "tts-1")?.health.status, stt: providers.deepgram.stt.find((m) => m.id === "nova-3")?.health.status };
}

/** [the activity's total, the clients' own count]: characters (TTS) and seconds (STT, each session rounded up as usage.ts does). */
async function booksOf(url: string, key: string, outcomes: Outcome[]): Promise<Run["books"]> {
  const client = {
    characters: outcomes.reduce((n, o) => n + o.characters, 0),
    seconds: outcomes.reduce((n, o) => n + (o.audioMs ? Math.ceil(o.audioMs / 1000) : 0), 0),
  };
  // Records are written as sessions end: read until two reads a moment apart agree.
  let previous = "";
  for (;;) {
    const sums = { characters: 0, seconds: 0 };
    let cursor: string | null = null;
    do {
      const page = (await (await fetch(`${url}/account/activity?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { headers: { Authorization: `Bearer ${key}` } })).json()) as {
        items: { capability: string; usage_amount: number }[];
        next_cursor: string | null;
      };
      for (const item of page.items) sums[item.capability === "tts" ? "characters" : "seconds"] += item.usage_amount;
      cursor = page.next_cursor;
    } while (cursor);
    if (JSON.stringify(sums) === previous) return { characters: [sums.characters, client.characters], seconds: [sums.seconds, client.seconds] };
    previous = JSON.stringify(sums);
    await Bun.sleep(500);
  }
}

const count = (xs: Outcome[], kind: Kind) => xs.filter((o) => o.kind === kind);
const pct = (xs: Outcome[]) => `${xs.filter((o) => o.survived).length}/${xs.length} (${((100 * xs.filter((o) => o.survived).length) / Math.max(1, xs.length)).toFixed(1)}%)`;

console.log(
  `voxroute failover benchmark; ${navigator.hardwareConcurrency} cores; per wave ${SIZES.tts} /v1/tts, ${SIZES.stt} /v1/stt, ${SIZES.conversation} conversations, each spread over 1 s; ` +
    `TTS falling back to ${TTS_FALLBACK.model}, cloud speech streamed at ${SPEECH_SPEED}× real time; faults at ${FAULT_AT_MS} ms (fakes broken) and after ${FAULT_AFTER_S} s of a listen socket's audio; ${Object.entries(
      TIMEOUTS,
    )
      .map(([k, v]) => `${k}=${v}`)
      .join(" ")}`,
);
let reference: Map<Kind, number> | undefined;
for (const fault of FAULTS) {
  const r = await run(fault);
  const finals = new Map<Kind, number>((["tts", "stt", "conversation"] as Kind[]).map((k) => [k, Math.max(0, ...count(r.outcomes, k).map((o) => o.finals.length))]));
  reference ??= fault === "none" ? finals : undefined;
  console.log(`fault ${fault}${r.midStream ? "" : " (no mid-stream fault on the Deepgram fake: listen sockets meet the fault only when the port breaks)"}:`);
  for (const kind of ["tts", "stt", "conversation"] as Kind[]) {
    const xs = count(r.outcomes, kind);
    const dead = xs.filter((o) => !o.survived).map((o) => o.close);
    console.log(`  ${kind.padEnd(12)} surviving ${pct(xs)}, switched mid-session ${xs.filter((o) => o.switched).length}${dead.length ? `; ended: ${[...new Set(dead)].slice(0, 3).join(" | ")}` : ""}`);
  }
  const gaps = r.outcomes.flatMap((o) => (o.gapMs === undefined ? [] : [o.gapMs]));
  if (gaps.length) {
    const told = r.outcomes.flatMap((o) => (o.switchedAt === undefined || r.brokenAt === undefined ? [] : [o.switchedAt - r.brokenAt]));
    const when = told.length ? `; told of the switch ${Math.min(...told).toFixed(0)}–${Math.max(...told).toFixed(0)} ms after the break` : "";
    console.log(`  audio gap at a TTS switch (/v1/tts, ${gaps.length} switches): ${spread(gaps, "ms", 0)}  max ${Math.max(...gaps).toFixed(0)} ms${when}`);
  }
  if (reference) {
    let lost = 0;
    let repeated = 0;
    for (const o of r.outcomes.filter((x) => x.kind !== "tts")) {
      const want = reference.get(o.kind)!;
      lost += Math.max(0, want - o.finals.length);
      repeated += Math.max(0, o.finals.length - want);
    }
    console.log(`  final transcripts against the reference (${reference.get("stt")} per /v1/stt session, ${reference.get("conversation")} per conversation): lost ${lost}, repeated ${repeated}`);
  }
  if (fault !== "none") {
    const late = `then ${r.late.length} sessions opened: arrivals at the dead fakes ${r.deadArrivals}, the setup of those that started ${spread(
      r.late.map((o) => o.setupMs).filter((ms) => !Number.isNaN(ms)),
      "ms",
      1,
    )}`;
    const opened = r.openedAfterMs === undefined ? "not both seen open within 30 s" : `open ${r.openedAfterMs.toFixed(0)} ms after the break`;
    console.log(`  circuits ${opened} (then requests of the first wave's sessions at the dead fakes: ${r.earlyArrivals}); ${late}`);
  }
  const exact = (x: [number, number]) => `${x[0]} vs ${x[1]}${x[0] === x[1] ? " (exact)" : ` (off by ${x[0] - x[1]})`}`;
  console.log(`  books: TTS characters billed ${exact(r.books.characters)}; STT seconds billed ${exact(r.books.seconds)}`);
}
