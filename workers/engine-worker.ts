// An engine worker: hosts the embedded TTS engines off the main thread. Each session opened here
// is served in order: one `say` (an utterance) at a time, audio handed back as it is produced.
// Synthesis is what takes time, so the utterances wait their turns, one per session per round
// (`Turns`); everything else (opening a session, dropping one, the voice list) is handled at once,
// between two utterances. A session opened while many utterances are queued is thus accepted at
// once and its first utterance comes in the next round, instead of the session waiting for all of
// them before it may queue anything. Sessions opened in the interactive lane (a live
// conversation's answers) have their utterances taken before the bulk sessions', bulk still getting
// one turn in every `BULK_EVERY` (`LanedTurns`).

import { parentPort, workerData } from "node:worker_threads";
import { exactBuffer } from "../src/audio/bytes.ts";
import { Mp3StreamEncoder } from "../src/audio/mp3.ts";
import { speechRuns } from "../src/audio/speech-runs.ts";
import { createEspeakEngine } from "../src/providers/local-espeak/engine.ts";
import { UnknownVoiceError, type LocalEngine } from "../src/providers/local-engine-types.ts";
import { createFliteEngine } from "../src/providers/local-flite/engine.ts";
import { createPicoEngine } from "../src/providers/local-pico/engine.ts";
import { phraseAnchors } from "../src/providers/timing/phrase-anchors.ts";
import { utteranceTimes } from "../src/providers/timing/utterance-times.ts";
import type { EngineName, EngineWorkerOptions, FromWorker, ToWorker } from "./engine-protocol.ts";
import { LanedTurns } from "../src/util/round-robin-turns.ts";

const options = workerData as EngineWorkerOptions;
/** Audio is coalesced to at least this many bytes per message (64 ms at 16 kHz). */
const CHUNK_BYTES = 2048;
/** The bulk lane takes one turn after this many interactive ones (docs/routing.md). */
const BULK_EVERY = 4;

const loaders: Record<EngineName, () => Promise<LocalEngine>> = {
  flite: () => createFliteEngine(options.scratchDir),
  "svox-pico": () => createPicoEngine({ voicesDir: options.picoVoicesDir, voicesUrl: options.picoVoicesUrl, offered: options.picoVoices }),
  "espeak-ng": createEspeakEngine,
};
const engines = new Map<EngineName, Promise<LocalEngine>>();
const engine = (name: EngineName) => {
  let e = engines.get(name);
  if (!e) engines.set(name, (e = loaders[name]()));
  return e;
};

interface Session {
  engine: LocalEngine;
  voice?: string;
  speed?: number;
  mp3?: Mp3StreamEncoder;
  sampleRate: number;
  /** Seconds of audio the session has been handed so far. */
  seconds: number;
}
const sessions = new Map<number, Session>();
// Messages handled at once are handled strictly in order, even across the async `open`.
let chain: Promise<void> = Promise.resolve();
/** The utterances waiting for synthesis; a session's `end` waits behind its own. */
const turns = new LanedTurns<ToWorker>((msg) => msg.op === "say", BULK_EVERY);
/** The sessions in the interactive lane, known from their `open` on: their utterances may come before it is handled. */
const interactive = new Set<number>();
let turning = false;

const post = (msg: FromWorker, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(msg, transfer);

function sendAudio(sid: number, bytes: Uint8Array) {
  if (bytes.length === 0) return;
  const buf = exactBuffer(bytes);
  post({ sid, ev: "audio", buf }, [buf]);
}

function say(sid: number, s: Session, text: string, raw: string | undefined) {
  let pending: Uint8Array[] = [];
  let size = 0;
  const emit = () => {
    if (size === 0) return;
    const joined = pending.length === 1 ? pending[0] : Buffer.concat(pending, size);
    pending = [];
    size = 0;
    sendAudio(sid, s.mp3 ? s.mp3.encode(joined) : joined);
  };
  const take = (pcm: Uint8Array) => {
    pending.push(pcm);
    size += pcm.length;
    if (size >= CHUNK_BYTES) emit();
  };
  if (raw === undefined) {
    s.engine.synthesize(text, s.voice, take, s.speed);
    return emit();
  }
  // The utterance's times go before its audio, so its audio waits for the whole utterance.
  const parts: Uint8Array[] = [];
  const anchors = s.engine.synthesize(text, s.voice, (pcm) => parts.push(pcm), s.speed);
  const pcm = Buffer.concat(parts);
  const duration = pcm.byteLength / 2 / s.sampleRate;
  const times = utteranceTimes(raw, text, anchors ?? phraseAnchors(text, speechRuns(pcm, s.sampleRate)), s.seconds, duration);
  post({ sid, ev: "alignment", ...times });
  s.seconds += duration;
  take(pcm);
  emit();
}

function forget(sid: number) {
  sessions.delete(sid);
  interactive.delete(sid);
}

async function handle(msg: ToWorker) {
  const { sid } = msg;
  try {
    switch (msg.op) {
      case "open": {
        const e = await engine(msg.engine);
        const sampleRate = await e.prepare(msg.voice);
        sessions.set(sid, { engine: e, voice: msg.voice, speed: msg.speed, mp3: msg.format === "mp3" ? new Mp3StreamEncoder(sampleRate) : undefined, sampleRate, seconds: 0 });
        return post({ sid, ev: "opened", sampleRate });
      }
      case "say": {
        const s = sessions.get(sid);
        if (!s) return;
        say(sid, s, msg.text, msg.raw);
        return post({ sid, ev: "said" });
      }
      case "end": {
        const s = sessions.get(sid);
        if (s?.mp3) sendAudio(sid, s.mp3.flush());
        forget(sid);
        return post({ sid, ev: "ended" });
      }
      case "drop":
        forget(sid);
        return;
      case "voices": {
        const e = await engine(msg.engine);
        return post({ sid, ev: "voices", voices: e.voices(), names: e.voiceNames() });
      }
    }
  } catch (err) {
    forget(sid);
    post({ sid, ev: "error", message: (err as Error).message, unknownVoice: err instanceof UnknownVoiceError });
  }
}

/** One turn per macrotask, so that messages arriving meanwhile are handled between two utterances. */
function takeTurns() {
  if (turning) return;
  turning = true;
  setImmediate(function next() {
    const turn = turns.next();
    if (!turn) return void (turning = false);
    for (const msg of turn) chain = chain.then(() => handle(msg));
    chain = chain.then(() => void setImmediate(next));
  });
}

parentPort!.on("message", (msg: ToWorker) => {
  if (msg.op === "open" && msg.lane === "interactive") interactive.add(msg.sid);
  if (msg.op === "drop") turns.drop(msg.sid);
  if (msg.op === "say" || (msg.op === "end" && turns.has(msg.sid))) {
    turns.add(msg, interactive.has(msg.sid));
    return takeTurns();
  }
  chain = chain.then(() => handle(msg));
});
