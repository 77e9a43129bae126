// An audio worker: router VAD (Silero) and, for local sessions, the PocketSphinx recognizer,
// per session, off the main thread. Each session's messages are handled strictly in order. A
// recognition session borrows one of the worker's decoders and gives it back on every way out.

import { parentPort, workerData } from "node:worker_threads";
import { loadOnnxRuntime } from "../src/audio/onnxruntime.ts";
import { loadSilero, SileroVad } from "../src/audio/vad.ts";
import type { SphinxDecoder } from "../src/providers/local-pocketsphinx/decoder.ts";
import { DecoderPool } from "../src/providers/local-pocketsphinx/decoder-pool.ts";
import type { AudioWorkerOptions, FromAudio, ToAudio } from "./audio-protocol.ts";

/** Interim hypotheses at most this often, in audio time. */
const INTERIM_EVERY_MS = 250;
/** A session that asked for scores gets the VAD's highest speech probability once per this much audio (8 frames of 32 ms), not per frame. */
const SCORE_EVERY_MS = 250;

const post = (msg: FromAudio) => parentPort!.postMessage(msg);
const options = workerData as AudioWorkerOptions;
const decoders = new DecoderPool(options.decoders, options.modelDir);
let silero: ReturnType<typeof loadSilero> | undefined;

/** The VAD's model, loaded once for the worker; a load that failed (its cache directory not writable yet) is tried again by the next session. */
function sileroModels(): ReturnType<typeof loadSilero> {
  silero ??= loadOnnxRuntime(options.cacheDir)
    .then(loadSilero)
    .catch((err) => {
      silero = undefined;
      throw err;
    });
  return silero;
}

interface Session {
  rate: number;
  vad?: SileroVad;
  decoder?: SphinxDecoder;
  autoCommit: boolean;
  interim: boolean;
  samples: number;
  utteranceStart: number;
  utteranceHasAudio: boolean;
  lastInterimAt: number;
  lastInterim: string;
  carry?: number;
}
const sessions = new Map<number, Session>();
const ms = (s: Session, samples: number) => Math.round((samples / s.rate) * 1000);

function finalize(sid: number, s: Session): void {
  if (!s.decoder) return;
  const text = s.decoder.end();
  // A stretch with nothing recognized in it (trailing silence) is no transcript.
  if (s.utteranceHasAudio && text) post({ sid, ev: "final", text, startMs: ms(s, s.utteranceStart), endMs: ms(s, s.samples) });
  s.decoder.start();
  s.utteranceStart = s.samples;
  s.utteranceHasAudio = false;
  s.lastInterim = "";
}

async function audio(sid: number, s: Session, buf: ArrayBuffer): Promise<void> {
  let bytes = new Uint8Array(buf);
  if (s.carry !== undefined) {
    const joined = new Uint8Array(bytes.length + 1);
    joined[0] = s.carry;
    joined.set(bytes, 1);
    bytes = joined;
    s.carry = undefined;
  }
  if (bytes.length % 2) s.carry = bytes[bytes.length - 1];
  const even = bytes.length & ~1;
  const pcm = bytes.byteOffset % 2 === 0 ? new Int16Array(bytes.buffer, bytes.byteOffset, even / 2) : new Int16Array(bytes.slice(0, even).buffer);
  if (s.decoder) {
    s.decoder.process(pcm);
    s.utteranceHasAudio = true;
  }
  s.samples += pcm.length;
  if (s.vad) {
    for (const e of await s.vad.push(pcm)) {
      if (e.type === "started") post({ sid, ev: "speech_started", atMs: e.atMs });
      else if (e.type === "score") post({ sid, ev: "vad_score", score: e.score, atMs: e.atMs });
      else {
        if (s.autoCommit) finalize(sid, s);
        post({ sid, ev: "speech_ended", atMs: e.atMs, committed: s.autoCommit && !!s.decoder });
      }
    }
  }
  if (s.decoder && s.interim && ms(s, s.samples) - s.lastInterimAt >= INTERIM_EVERY_MS) {
    s.lastInterimAt = ms(s, s.samples);
    const text = s.decoder.hypothesis();
    if (text && text !== s.lastInterim) {
      s.lastInterim = text;
      post({ sid, ev: "interim", text, startMs: ms(s, s.utteranceStart), endMs: ms(s, s.samples) });
    }
  }
}

async function handle(msg: ToAudio): Promise<void> {
  const { sid } = msg;
  if (msg.op === "open") {
    const s: Session = { rate: msg.rate, autoCommit: msg.autoCommit, interim: msg.interim, samples: 0, utteranceStart: 0, utteranceHasAudio: false, lastInterimAt: 0, lastInterim: "" };
    sessions.set(sid, s); // from here on, a failure releases what the session holds
    if (msg.vad) s.vad = new SileroVad(await sileroModels(), msg.rate, msg.vad, msg.scores ? SCORE_EVERY_MS : 0);
    // A session dropped while it was opening (its client left) never takes a decoder.
    if (msg.recognizer && !dropped.has(sid)) {
      s.decoder = await decoders.acquire();
      s.decoder.start();
    }
    return post({ sid, ev: "opened" });
  }
  const s = sessions.get(sid);
  if (!s) return;
  switch (msg.op) {
    case "audio":
      return audio(sid, s, msg.buf);
    case "commit":
      finalize(sid, s);
      return post({ sid, ev: "committed", atMs: ms(s, s.samples) });
    case "clear":
      if (s.decoder) {
        s.decoder.end();
        s.decoder.start();
      }
      s.utteranceStart = s.samples;
      s.utteranceHasAudio = false;
      s.lastInterim = "";
      return post({ sid, ev: "cleared", atMs: ms(s, s.samples) });
    case "end":
      finalize(sid, s);
      release(sid, s);
      return post({ sid, ev: "ended", audioMs: ms(s, s.samples) });
    case "drop":
      return release(sid, s);
  }
}

function release(sid: number, s: Session): void {
  sessions.delete(sid);
  const decoder = s.decoder;
  s.decoder = undefined;
  if (!decoder) return;
  try {
    decoder.end();
  } finally {
    decoders.release(decoder);
  }
}

// One chain per session, from its `open` on (which loads models and may take a while): its
// messages in order, and other sessions never wait for it.
const chains = new Map<number, Promise<void>>();
/** Sessions whose drop has arrived but not yet run (it waits behind their earlier messages). */
const dropped = new Set<number>();
let stopping = false;
parentPort!.on("message", (msg: ToAudio) => {
  if (stopping) return;
  if (msg.op === "shutdown") {
    // Terminating a thread inside onnxruntime's inference aborts the whole process.
    stopping = true;
    void Promise.allSettled(chains.values()).then(() => process.exit(0));
    return;
  }
  const run = () =>
    handle(msg).catch((err) => {
      const s = sessions.get(msg.sid);
      if (s) release(msg.sid, s);
      post({ sid: msg.sid, ev: "error", message: (err as Error).message });
    });
  if (msg.op === "drop") dropped.add(msg.sid);
  const next = (chains.get(msg.sid) ?? Promise.resolve()).then(run);
  chains.set(msg.sid, next);
  if (msg.op === "end" || msg.op === "drop")
    void next.finally(() => {
      if (msg.op === "drop") dropped.delete(msg.sid);
      if (chains.get(msg.sid) === next) chains.delete(msg.sid);
    });
});
