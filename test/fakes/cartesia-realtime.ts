import type { ServerWebSocket } from "bun";
import { dropCue, speech } from "./http-fake.ts";
import { closeWhenIdle } from "./idle-close.ts";
import type { ReceivedAudio } from "./received-audio.ts";

// The realtime half of the Cartesia fake: Sonic's `/tts/websocket` (contexts) and Ink's
// manual-finalize `/stt/websocket`, as Cartesia speaks them.
//
// TTS: JSON generation requests `{model_id, transcript, voice, output_format (raw only),
// context_id, continue, flush, max_buffer_delay_ms, …}`. A context buffers its text for
// `max_buffer_delay_ms` (default 3000; 0 speaks each message at once), a `flush` speaks what is
// buffered and answers `flush_done` with the context's flush id (1, 2, …), `continue: false`
// speaks the rest and answers `done`, `{context_id, cancel: true}` stops the context silently.
// Audio is real Flite speech at the asked rate, base64 in `chunk` messages of 100 ms. With
// `add_timestamps: true`, each sentence's `timestamps` message (its words, white-space separated,
// spread over the sentence's audio in proportion to their length, in seconds from the context's
// start) follows the sentence's chunks.
//
// STT: binary audio in at `encoding`/`sample_rate`; an interim `transcript` (`is_final: false`,
// the text since the last final) every 0.5 s of audio; plain-text `finalize` answers the final
// transcript of the audio since the last one (a delta, verbatim: later ones start with a space)
// and `flush_done`; `close` answers the last final, `done`, and closes 1000. Words come from a
// fixed sentence, two per second of audio, for audio with sound in it since the last final:
// digital silence is transcribed as nothing (an empty text).
//
// Errors are `{type:"error", status_code, error_code, title, message, request_id}`.
// Socket faults for the next connection: "stall" (everything is read, nothing is answered),
// "drop" (the TCP connection is cut; TTS: after the second chunk, once the test calls
// `cutDroppedConnections`; STT: after 1 s of audio),
// "malformed" (a frame that is not JSON instead of the first answer), "error" (an `error`
// message with status 500 instead of the first answer, then close 1011).

export type SocketFault = "stall" | "drop" | "malformed" | "error";

/** What a TTS socket sent: its auth and each JSON message. */
export interface TtsSocketRecord {
  authorization: string | null;
  version: string | null;
  messages: Record<string, any>[];
}

/** Characters (code points) of transcript a TTS socket was sent: the text Cartesia was given. */
export const transcriptChars = (record: TtsSocketRecord) => record.messages.reduce((n, m) => n + (typeof m.transcript === "string" ? [...m.transcript].length : 0), 0);

/** What an STT socket sent: its query, auth, text frames and audio. */
export interface SttSocketRecord {
  query: URLSearchParams;
  authorization: string | null;
  version: string | null;
  texts: string[];
  audioBytes: number;
  /** The audio's digest, in arrival order. */
  received: ReceivedAudio;
}

interface Context {
  id: string;
  buffer: string;
  flushes: number;
  /** Whether a request asked for word timestamps, and the seconds of audio sent so far. */
  timestamps: boolean;
  seconds: number;
  timer?: ReturnType<typeof setTimeout>;
  chain: Promise<void>;
  cancelled: boolean;
}

interface TtsConn {
  kind: "tts";
  record: TtsSocketRecord;
  fault?: SocketFault;
  answered: boolean;
  chunksSent: number;
  contexts: Map<string, Context>;
  /** Whether the fake has that voice. */
  speaks: (voiceId: string) => boolean;
  audio: Map<string, Uint8Array>;
}

interface SttConn {
  kind: "stt";
  record: SttSocketRecord;
  fault?: SocketFault;
  answered: boolean;
  requestId: string;
  bytesPerSecond: number;
  /** Audio bytes up to the last final, and up to the last interim. */
  finalAt: number;
  interimAt: number;
  words: number;
  /** Some of the audio since the last final was sound. */
  soundSinceFinal: boolean;
  /** Closes the socket once the client sent nothing for `idleMs`, when set. */
  idleMs?: number;
  idle?: { heard(): void };
}

export type RealtimeConn = TtsConn | SttConn;
type Socket = ServerWebSocket<RealtimeConn>;

const WORDS = "Thank you very much. For your help. I would like a cup of coffee.".split(" ");

const errorMessage = (status: number, error_code: string, message: string, context_id?: string) =>
  JSON.stringify({
    type: "error",
    status_code: status,
    error_code,
    title: message,
    message,
    doc_url: "https://docs.cartesia.ai",
    request_id: crypto.randomUUID(),
    done: true,
    ...(context_id ? { context_id } : {}),
  });

export function ttsConn(record: TtsSocketRecord, fault: SocketFault | undefined, speaks: (voiceId: string) => boolean, audio: Map<string, Uint8Array>): TtsConn {
  return { kind: "tts", record, fault, answered: false, chunksSent: 0, contexts: new Map(), speaks, audio };
}

/** Undefined when the query opens a session, else why not. */
export function sttQueryProblem(q: URLSearchParams): string | undefined {
  if (!q.get("model")?.startsWith("ink")) return "model must be an Ink model";
  if (!["pcm_s16le", "pcm_mulaw"].includes(q.get("encoding") ?? "")) return "encoding not supported by this fake";
  if (!(Number(q.get("sample_rate")) > 0)) return "sample_rate is required";
}

export function sttConn(record: SttSocketRecord, fault: SocketFault | undefined, idleMs: number | undefined): SttConn {
  const perSample = record.query.get("encoding") === "pcm_mulaw" ? 1 : 2;
  return {
    kind: "stt",
    record,
    fault,
    answered: false,
    requestId: crypto.randomUUID(),
    bytesPerSecond: Number(record.query.get("sample_rate")) * perSample,
    finalAt: 0,
    interimAt: 0,
    words: 0,
    soundSinceFinal: false,
    idleMs,
  };
}

/** The fault that replaces the first answer, if any: true when it did. */
function firstAnswerFault(ws: Socket, contextId?: string): boolean {
  const c = ws.data;
  if (c.answered) return false;
  c.answered = true;
  if (c.fault === "malformed") ws.send("<html>502 Bad Gateway</html>");
  else if (c.fault === "error") {
    ws.send(errorMessage(500, "internal_error", "Internal server error", contextId));
    ws.close(1011, "internal error");
  } else return false;
  return true;
}

export const realtimeHandlers = {
  open(ws: Socket) {
    const c = ws.data;
    if (c.kind === "stt" && c.idleMs !== undefined) c.idle = closeWhenIdle(ws, c.idleMs, () => ws.close(1008, "connection idle for too long"));
  },
  message(ws: Socket, frame: string | Buffer) {
    if (ws.data.kind === "tts") ttsMessage(ws as ServerWebSocket<TtsConn>, frame);
    else sttMessage(ws as ServerWebSocket<SttConn>, frame);
  },
  close(ws: Socket) {
    if (ws.data.kind === "tts") for (const ctx of ws.data.contexts.values()) stopContext(ctx);
  },
};

// ---- TTS ----

function stopContext(ctx: Context): void {
  ctx.cancelled = true;
  clearTimeout(ctx.timer);
}

function ttsMessage(ws: ServerWebSocket<TtsConn>, frame: string | Buffer): void {
  const c = ws.data;
  if (typeof frame !== "string") return void ws.send(errorMessage(400, "invalid_request", "Binary messages are not accepted"));
  let msg: Record<string, any>;
  try {
    msg = JSON.parse(frame);
  } catch {
    return void ws.send(errorMessage(400, "invalid_json", "Message is not valid JSON"));
  }
  c.record.messages.push(msg);
  if (c.fault === "stall") return;
  const id = msg.context_id;
  if (typeof id !== "string" || !id) return void ws.send(errorMessage(400, "invalid_request", "context_id is required"));
  if (msg.cancel === true) {
    const ctx = c.contexts.get(id);
    if (ctx) stopContext(ctx);
    c.contexts.delete(id);
    return;
  }
  if (firstAnswerFault(ws, id)) return;
  const problem = generationProblem(msg, c.speaks);
  if (problem) return void ws.send(errorMessage(problem[0], problem[1], problem[2], id));
  let ctx = c.contexts.get(id);
  if (!ctx) c.contexts.set(id, (ctx = { id, buffer: "", flushes: 0, timestamps: false, seconds: 0, chain: Promise.resolve(), cancelled: false }));
  ctx.buffer += msg.transcript;
  if (msg.add_timestamps === true) ctx.timestamps = true;
  const rate = Number(msg.output_format.sample_rate);
  if (msg.flush === true) {
    const flushId = ++ctx.flushes;
    speakBuffered(ws, ctx, rate, flushId, { type: "flush_done", done: false, flush_done: true, flush_id: flushId, status_code: 206, context_id: id });
  } else if (msg.continue !== true) {
    c.contexts.delete(id);
    speakBuffered(ws, ctx, rate, undefined, { type: "done", done: true, status_code: 200, context_id: id });
  } else if (!ctx.timer) {
    const delay = typeof msg.max_buffer_delay_ms === "number" ? msg.max_buffer_delay_ms : 3000;
    if (delay === 0) speakBuffered(ws, ctx, rate);
    else ctx.timer = setTimeout(() => speakBuffered(ws, ctx, rate), delay);
  }
}

/** [status, error_code, message] when the generation request cannot be served. */
function generationProblem(msg: Record<string, any>, speaks: (voiceId: string) => boolean): [number, string, string] | undefined {
  if (typeof msg.model_id !== "string" || !msg.model_id) return [400, "invalid_model", "model_id is required"];
  if (typeof msg.transcript !== "string") return [400, "invalid_request", "transcript is required"];
  const id = typeof msg.voice === "string" ? msg.voice : msg.voice?.id;
  if (!speaks(id)) return [404, "voice_not_found", "Voice not found"];
  const out = msg.output_format ?? {};
  if (out.container !== "raw" || out.encoding !== "pcm_s16le" || !(Number(out.sample_rate) > 0)) return [400, "invalid_output_format", "The WebSocket supports raw output only"];
}

/**
 * Speaks what the context has buffered, after what it is already saying, then sends `last`.
 * Sentence by sentence, as Sonic streams: the fake shares the event loop with the router under
 * test, and one long synthesis would stall it.
 */
function speakBuffered(ws: ServerWebSocket<TtsConn>, ctx: Context, rate: number, flushId?: number, last?: Record<string, unknown>): void {
  clearTimeout(ctx.timer);
  ctx.timer = undefined;
  const sentences = ctx.buffer.split(/(?<=[.!?;:])\s+/).filter((s) => s.trim());
  ctx.buffer = "";
  ctx.chain = ctx.chain.then(async () => {
    const c = ws.data;
    const chunk = (rate / 10) * 2;
    for (const sentence of sentences) {
      const pcm = cachedSpeech(c.audio, sentence, rate);
      for (let i = 0; i < pcm.length; i += chunk) {
        if (ctx.cancelled) return;
        const data = Buffer.from(pcm.subarray(i, i + chunk)).toString("base64");
        ws.send(JSON.stringify({ type: "chunk", data, done: false, status_code: 206, step_time: 12.5, context_id: ctx.id, ...(flushId ? { flush_id: flushId } : {}) }));
        await Bun.sleep(1);
        if (c.fault === "drop" && ++c.chunksSent >= 2) return dropCue().then(() => ws.terminate());
      }
      const seconds = pcm.length / 2 / rate;
      if (ctx.timestamps) ws.send(JSON.stringify({ type: "timestamps", word_timestamps: wordTimestamps(sentence, ctx.seconds, seconds), done: false, status_code: 206, context_id: ctx.id }));
      ctx.seconds += seconds;
    }
    if (last && !ctx.cancelled) ws.send(JSON.stringify(last));
  });
}

/** The sentence's words spread over `seconds` of audio from `from`, each in proportion to its length. */
function wordTimestamps(sentence: string, from: number, seconds: number): { words: string[]; start: number[]; end: number[] } {
  const words = sentence.split(/\s+/).filter((w) => w);
  const total = words.reduce((n, w) => n + w.length, 0);
  const start: number[] = [];
  const end: number[] = [];
  let at = from;
  for (const word of words) {
    start.push(at);
    at += (seconds * word.length) / total;
    end.push(at);
  }
  return { words, start, end };
}

function cachedSpeech(cache: Map<string, Uint8Array>, text: string, rate: number): Uint8Array {
  const key = `${rate}\n${text}`;
  let pcm = cache.get(key);
  if (!pcm) cache.set(key, (pcm = speech(text, rate)));
  return pcm;
}

// ---- STT ----

function sttMessage(ws: ServerWebSocket<SttConn>, frame: string | Buffer): void {
  const c = ws.data;
  c.idle?.heard();
  if (typeof frame === "string") {
    c.record.texts.push(frame);
    if (c.fault === "stall" || firstAnswerFault(ws)) return;
    if (frame === "finalize") {
      sendFinal(ws);
      ws.send(JSON.stringify({ type: "flush_done", request_id: c.requestId }));
    } else if (frame === "close") {
      sendFinal(ws);
      ws.send(JSON.stringify({ type: "done", request_id: c.requestId }));
      ws.close(1000, "");
    } else ws.send(errorMessage(400, "invalid_request", `Unknown command ${JSON.stringify(frame.slice(0, 40))}: send finalize or close`));
    return;
  }
  c.record.audioBytes += frame.byteLength;
  if (c.record.received.add(frame)) c.soundSinceFinal = true;
  if (c.fault === "stall" || firstAnswerFault(ws)) return;
  if (c.fault === "drop" && c.record.audioBytes >= c.bytesPerSecond) return ws.terminate();
  if (c.record.audioBytes - c.interimAt >= c.bytesPerSecond / 2) {
    c.interimAt = c.record.audioBytes;
    ws.send(transcript(c, false));
  }
}

function sendFinal(ws: ServerWebSocket<SttConn>): void {
  const c = ws.data;
  if (c.record.audioBytes > c.finalAt) ws.send(transcript(c, true));
  c.finalAt = c.interimAt = c.record.audioBytes;
  c.soundSinceFinal = false;
}

/** The text of the audio since the last final (a delta, as Cartesia sends it); a final moves on. */
function transcript(c: SttConn, isFinal: boolean): string {
  const seconds = (c.record.audioBytes - c.finalAt) / c.bytesPerSecond;
  const n = c.soundSinceFinal ? Math.max(1, Math.round(seconds * 2)) : 0;
  const words = Array.from({ length: n }, (_, i) => WORDS[(c.words + i) % WORDS.length]);
  const text = n && c.words > 0 ? ` ${words.join(" ")}` : words.join(" ");
  if (isFinal) c.words += n;
  return JSON.stringify({ type: "transcript", text, is_final: isFinal, request_id: c.requestId, duration: seconds, language: c.record.query.get("language") ?? "en" });
}
