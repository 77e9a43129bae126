// The callers of bench/failover.ts, one per session kind, each recording what its client saw:
// how the session ended, its final transcripts, the characters and audio it was delivered or
// sent, and (TTS) when audio stopped and resumed around a switch of provider.
import { concat, frames, silence, speak } from "../../test/helpers/speech.ts";

export type Kind = "tts" | "stt" | "conversation";

export interface Outcome {
  kind: Kind;
  /** Closed normally (1000), as the client saw it. */
  survived: boolean;
  close: string;
  /** Non-empty final transcripts (conversation: the turns' texts), in order. */
  finals: string[];
  /** TTS: characters sent; conversation: characters of the answers' tokens. */
  characters: number;
  /** STT and conversation: caller audio sent, ms. */
  audioMs: number;
  /** TTS: the audio gap around a switch of provider after audio had arrived, ms. */
  gapMs?: number;
  /** TTS: when the client was told another provider took over (performance.now()). */
  switchedAt?: number;
  /** Told of another provider taking over mid-session (/v1/stt: stt.provider.switched; a conversation: an answer spoken by another TTS provider than the first). */
  switched: boolean;
  /** From the socket's creation to the session's first event (ready / started). */
  setupMs: number;
}

export interface Target {
  ws: string;
  key: string;
}

/** Frames of 100 ms by default, as the AssemblyAI fallback requires (50–1000 ms; docs/providers/assemblyai.md): a turn is padded to whole frames. */
const FRAME_MS = Number(process.env.BENCH_FRAME_MS ?? 100);
const SPEECH = speak("Thank you very much for your help.");
const TURN = frames(concat([SPEECH, silence(600 + FRAME_MS - ((SPEECH.length / 16) % FRAME_MS))]), 16000, FRAME_MS);
export const TURNS = Number(process.env.BENCH_TURNS ?? 3);
export const SENTENCES = Array.from({ length: Number(process.env.BENCH_SENTENCES ?? 8) }, (_, i) => `This is sentence number ${i + 1} of the answer.`);
/** A conversation whose turn gets no answer in this time is counted dead and closed (the caller hangs up). */
const ANSWER_WAIT_MS = 30_000;
/** Between two sentences sent to /v1/tts, as an application's answer comes. */
const SENTENCE_PACE_MS = 500;

function open(target: Target, path: string): WebSocket {
  const ws = new WebSocket(`${target.ws}${path}`, { headers: { Authorization: `Bearer ${target.key}` } } as never);
  ws.binaryType = "arraybuffer";
  return ws;
}

const closed = (ws: WebSocket) => new Promise<CloseEvent>((resolve) => (ws.onclose = resolve));

/** One turn of caller audio in real time; resolves with the ms of audio sent. */
async function speakTurn(ws: WebSocket): Promise<number> {
  const start = performance.now();
  let sent = 0;
  for (const [i, frame] of TURN.entries()) {
    const due = start + i * FRAME_MS - performance.now();
    if (due > 0) await Bun.sleep(due);
    if (ws.readyState !== WebSocket.OPEN) break;
    ws.send(frame);
    sent += FRAME_MS;
  }
  return sent;
}

/** /v1/tts: sentences paced as an application's answer, each flushed, then close. */
export async function ttsSession(target: Target, query: string): Promise<Outcome> {
  const t0 = performance.now();
  const ws = open(target, `/v1/tts?${query}`);
  const out: Outcome = { kind: "tts", survived: false, close: "", finals: [], characters: 0, audioMs: 0, setupMs: Number.NaN, switched: false };
  const audio: number[] = [];
  const sends: number[] = [];
  let flushed = 0;
  /** The provider whose audio the client is hearing (told by audio_started, then by each connected status). */
  let serving: string | undefined;
  let switched: { frame: number; flushed: number; at: number } | undefined;
  const end = closed(ws);
  ws.onmessage = (e) => {
    if (typeof e.data !== "string") return void audio.push(performance.now());
    const ev = JSON.parse(e.data);
    if (ev.type === "service.tts_flushed") flushed++;
    else if (ev.type === "service.tts_audio_started") serving ??= ev.provider;
    else if (ev.type === "service.tts_provider_status" && ev.status === "connected") {
      if (serving !== undefined && ev.provider !== serving && !switched && audio.length) switched = { frame: audio.length, flushed, at: performance.now() };
      serving = ev.provider;
    } else if (ev.type === "service.tts_session_ready") {
      out.setupMs = performance.now() - t0;
      void (async () => {
        for (const text of SENTENCES) {
          if (ws.readyState !== WebSocket.OPEN) return;
          ws.send(JSON.stringify({ type: "text", text }));
          ws.send('{"type":"flush"}');
          sends.push(performance.now());
          out.characters += text.length;
          await Bun.sleep(SENTENCE_PACE_MS);
        }
        ws.send('{"type":"close"}');
      })();
    }
  };
  const c = await end;
  out.survived = c.code === 1000;
  out.close = `${c.code} ${c.reason}`;
  if (switched && switched.frame < audio.length) {
    // The caller waits from the later of its last audio and the sending of the first sentence whose audio had not ended.
    const waitFrom = Math.max(audio[switched.frame - 1], sends[switched.flushed] ?? 0);
    out.gapMs = audio[switched.frame] - waitFrom;
    out.switchedAt = switched.at;
    out.switched = true;
  }
  return out;
}

/** /v1/stt: TURNS turns of speech in real time, each committed, then stt.session.close. */
export async function sttSession(target: Target, query: string): Promise<Outcome> {
  const t0 = performance.now();
  const ws = open(target, `/v1/stt?${query}`);
  const out: Outcome = { kind: "stt", survived: false, close: "", finals: [], characters: 0, audioMs: 0, setupMs: Number.NaN, switched: false };
  const end = closed(ws);
  ws.onmessage = (e) => {
    const ev = JSON.parse(String(e.data));
    if (ev.type === "stt.session.started") out.setupMs = performance.now() - t0;
    else if (ev.type === "stt.transcript.final" && ev.text) out.finals.push(ev.text);
    else if (ev.type === "stt.provider.switched") out.switched = true;
  };
  // A socket refused before its upgrade (every candidate down: 503) never opens.
  await Promise.race([new Promise((resolve) => ws.addEventListener("open", resolve)), end]);
  for (let turn = 0; turn < TURNS && ws.readyState === WebSocket.OPEN; turn++) {
    out.audioMs += await speakTurn(ws);
    if (ws.readyState === WebSocket.OPEN) ws.send('{"type":"stt.audio.commit"}');
  }
  if (ws.readyState === WebSocket.OPEN) ws.send('{"type":"stt.session.close"}');
  const c = await end;
  out.survived = c.code === 1000;
  out.close = `${c.code} ${c.reason}`;
  return out;
}

/** /v1/realtime: TURNS turns, each committed and its answer heard to its end, then realtime.session.close. */
export async function conversation(target: Target, profileId: string): Promise<Outcome> {
  const t0 = performance.now();
  const ws = open(target, `/v1/realtime?profile_id=${profileId}`);
  const out: Outcome = { kind: "conversation", survived: false, close: "", finals: [], characters: 0, audioMs: 0, setupMs: Number.NaN, switched: false };
  let answered: () => void = () => {};
  let started: () => void = () => {};
  let voices: string | undefined;
  let unanswered = false;
  const ready = new Promise<void>((resolve) => (started = resolve));
  const end = closed(ws);
  void end.then(() => {
    answered();
    started();
  });
  ws.onmessage = (e) => {
    if (typeof e.data !== "string") return;
    const ev = JSON.parse(e.data);
    if (ev.type === "realtime.session.started") {
      out.setupMs = performance.now() - t0;
      started();
    } else if (ev.type === "realtime.turn.ended" && ev.text) out.finals.push(ev.text);
    else if (ev.type === "realtime.response.text") out.characters += ev.token.length;
    else if (ev.type === "realtime.response.audio.done") answered();
    else if (ev.type === "realtime.response.audio.started") {
      voices ??= ev.provider;
      if (ev.provider !== voices) out.switched = true;
    } else if (ev.type === "realtime.error") out.close = `${ev.code}: ${ev.message}`;
  };
  await ready;
  for (let turn = 0; turn < TURNS && ws.readyState === WebSocket.OPEN; turn++) {
    const answer = new Promise<void>((resolve) => (answered = resolve));
    out.audioMs += await speakTurn(ws);
    if (ws.readyState === WebSocket.OPEN) ws.send('{"type":"realtime.input_audio.commit"}');
    if ((await Promise.race([answer.then(() => true), Bun.sleep(ANSWER_WAIT_MS).then(() => false)])) === false) {
      unanswered = true;
      ws.close();
    }
  }
  if (ws.readyState === WebSocket.OPEN) ws.send('{"type":"realtime.session.close"}');
  const c = await end;
  out.survived = c.code === 1000 && !unanswered;
  out.close = unanswered ? `a turn unanswered after ${ANSWER_WAIT_MS / 1000} s` : `${c.code} ${c.reason}${out.close ? ` (${out.close})` : ""}`;
  return out;
}
