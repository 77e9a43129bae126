import type { Server, ServerWebSocket } from "bun";
import { Mp3StreamEncoder } from "../../src/audio/mp3.ts";
import { closeWhenIdle } from "./idle-close.ts";
import { type MidStreamFault, pauseAfter } from "./http-fake.ts";
import { ReceivedAudio } from "./received-audio.ts";

// The WebSocket half of the ElevenLabs fake (see elevenlabs.ts, which serves it on the same port).
//
// TTS `…/text-to-speech/{voice}/stream-input` and `…/multi-stream-input`: the first frame
// initialises (`text: " "`, `voice_settings`, `generation_config`); text is buffered and spoken
// once it reaches the next `chunk_length_schedule` length (default 120,160,250,290), on
// `try_trigger_generation`, `flush`, at the end of a context (`close_context`, answered with
// `{"isFinal":true,"contextId"}`), or at the end of input (`{"text":""}` single-context /
// `{"close_socket":true}` multi-context: then `isFinal` and close 1000). Audio is real Flite
// speech in `output_format` (pcm_<rate> or mp3_<rate>_<kbps>), base64 in
// `{"audio","alignment","normalizedAlignment"}` frames (+ `contextId`), camelCase as on the wire,
// each frame's characters spread evenly over its audio in ms from the frame's start (ElevenLabs
// sends alignment with or without `sync_alignment`; the fake always does); no `isFinal: false` on
// audio, which the SDK's strict schema refuses. A voice other than the
// fake's closes 1008, as does a frame that is not JSON.
//
// Scribe realtime `/v1/speech-to-text/realtime`: `session_started` first; JSON
// `input_audio_chunk` messages carry base64 audio; a chunk with `commit: true` commits; audio
// louder than a whisper is speech, and every 0.5 s of a segment with speech brings a
// `partial_transcript`; with `commit_strategy=vad` silence of `vad_silence_threshold_secs` after
// speech commits by itself. A commit answers `committed_transcript` (then
// `committed_transcript_with_timestamps` with `include_timestamps=true`); the text is as many
// words of a fixed sentence as the speech lasted. Bad input answers `input_error` /
// `invalid_request`.
//
// Faults for the next connection: "401" / "429" / "500" (the handshake answers that status),
// "stall" (accepts, then never answers), "drop" (TTS: closes 1011 after the first audio frame;
// Scribe: after 1 s of audio), "malformed" (a frame that is not JSON, before any audio or after
// the first audio chunk), "error" (TTS: close 1008 with a reason on the first text; Scribe: a
// `transcriber_error` message after the first audio chunk, then close 1011), "vad_race" (Scribe
// with `commit_strategy=vad`: each client commit finds the VAD committing first, all the speech
// but its last 0.5 s, so the commit answers that last 0.5 s).

export type RealtimeFault = "401" | "429" | "500" | "stall" | "drop" | "malformed" | "error" | "vad_race";

export interface TtsSocketRecord {
  voiceId: string;
  multi: boolean;
  query: Record<string, string>;
  /** Every frame the client sent, parsed. */
  frames: Record<string, any>[];
  apiKey: string | null;
}

export interface ScribeSocketRecord {
  query: URLSearchParams;
  /** Every text frame the client sent, exactly as it came. */
  texts: string[];
  audioBytes: number;
  /** The digest of the audio its chunks carried, in arrival order. */
  received: ReceivedAudio;
  apiKey: string | null;
}

interface TtsConn {
  kind: "tts";
  record: TtsSocketRecord;
  fault?: RealtimeFault;
  codec: string;
  rate: number;
  schedule: number[];
  contexts: Map<string, { buffer: string; chunks: number }>;
  /** Generation runs one piece at a time, so audio leaves in order. */
  work: Promise<void>;
  /** Closes the socket as ElevenLabs does after `inactivity_timeout` seconds without a text. */
  idle?: { heard(): void };
  /** Contexts open or still being generated. */
  active: Set<string>;
}

interface ScribeConn {
  kind: "scribe";
  record: ScribeSocketRecord;
  fault?: RealtimeFault;
  bytesPerMs: number;
  ulaw: boolean;
  segmentMs: number;
  speechMs: number;
  silenceMs: number;
  partialAtMs: number;
  spoke: boolean;
  idle?: { heard(): void };
}

export type RealtimeConn = TtsConn | ScribeConn;

const TTS_PATH = /^\/v1\/text-to-speech\/([^/]+)\/(multi-)?stream-input$/;
const SCRIBE_PATH = "/v1/speech-to-text/realtime";
const DEFAULT_SCHEDULE = [120, 160, 250, 290];
const SENTENCE = ["Thank", "you", "very", "much", "for", "your", "help"];
const AUDIO_FORMATS = ["pcm_8000", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"];
const SINGLE_CONTEXT = "";

/** `speaks(voiceId)`: whether the fake has that voice; `pcm(text, rate)`: real speech as 16-bit PCM at that rate (now, or once made); `speed`: TTS audio streamed at that many times real time. */
export function startRealtime(speaks: (voiceId: string) => boolean, pcm: (text: string, rate: number) => Uint8Array | Promise<Uint8Array>, speed?: number) {
  const ttsSockets: TtsSocketRecord[] = [];
  const scribeSockets: ScribeSocketRecord[] = [];
  /** See `closeIdleScribe`. */
  let scribeIdleMs: number | undefined;
  /** See `midStream`: a TTS fault once this many audio bytes went out, across sockets. */
  let armed: (MidStreamFault & { sent: number }) | undefined;

  /** Upgrades a realtime request; null when the path is not a realtime one. */
  function upgrade(req: Request, server: Server<RealtimeConn>, fault: RealtimeFault | undefined): Response | undefined | null {
    const url = new URL(req.url);
    const tts = TTS_PATH.exec(url.pathname);
    if (!tts && url.pathname !== SCRIBE_PATH) return null;
    const apiKey = req.headers.get("xi-api-key");
    let data: RealtimeConn;
    if (tts) {
      const format = url.searchParams.get("output_format") ?? "mp3_44100_128";
      const [codec, rate] = format.split("_");
      const record: TtsSocketRecord = { voiceId: tts[1]!, multi: Boolean(tts[2]), query: Object.fromEntries(url.searchParams), frames: [], apiKey };
      ttsSockets.push(record);
      data = { kind: "tts", record, fault, codec: codec!, rate: Number(rate), schedule: DEFAULT_SCHEDULE, contexts: new Map(), active: new Set(), work: Promise.resolve() };
    } else {
      const format = url.searchParams.get("audio_format") ?? "pcm_16000";
      const ulaw = format.startsWith("ulaw");
      const record: ScribeSocketRecord = { query: url.searchParams, texts: [], audioBytes: 0, received: new ReceivedAudio(ulaw ? "mulaw" : "pcm_s16le"), apiKey };
      scribeSockets.push(record);
      data = { kind: "scribe", record, fault, bytesPerMs: (Number(format.split("_")[1]) * (ulaw ? 1 : 2)) / 1000, ulaw, segmentMs: 0, speechMs: 0, silenceMs: 0, partialAtMs: 0, spoke: false };
    }
    return server.upgrade(req, { data }) ? undefined : new Response("upgrade failed", { status: 400 });
  }

  const websocket = {
    open(ws: ServerWebSocket<RealtimeConn>) {
      const c = ws.data;
      if (c.kind === "scribe") return scribeOpen(ws as ServerWebSocket<ScribeConn>);
      const { codec, rate } = c;
      if (!speaks(c.record.voiceId)) ws.close(1008, `A voice with voice_id ${c.record.voiceId} was not found.`);
      else if ((codec !== "pcm" && codec !== "mp3") || !rate) ws.close(1008, `output_format ${c.record.query.output_format} is not supported by this fake`);
      else {
        const seconds = Number(c.record.query.inactivity_timeout ?? 20);
        c.idle = closeWhenIdle(ws, seconds * 1000, () => ws.close(1008, `Have not received a new text input within the timeout of ${seconds} seconds.`));
      }
    },
    message(ws: ServerWebSocket<RealtimeConn>, frame: string | Buffer) {
      if (ws.data.kind === "tts") ttsMessage(ws as ServerWebSocket<TtsConn>, frame);
      else scribeMessage(ws as ServerWebSocket<ScribeConn>, frame);
    },
  };

  // ---- TTS ----

  function ttsMessage(ws: ServerWebSocket<TtsConn>, frame: string | Buffer) {
    const c = ws.data;
    let msg: Record<string, any>;
    try {
      msg = JSON.parse(String(frame));
    } catch {
      return ws.close(1008, "Invalid message: not JSON");
    }
    const first = !c.record.frames.length;
    c.record.frames.push(msg);
    if (typeof msg.text === "string") c.idle?.heard();
    if (c.fault === "stall") return;
    if (first) {
      if (!c.record.multi && msg.text !== " ") return ws.close(1008, 'The first message must initialise the stream with text " "');
      const schedule = msg.generation_config?.chunk_length_schedule;
      if (schedule) c.schedule = schedule;
    }
    if (c.fault === "error" && typeof msg.text === "string" && msg.text.trim()) return ws.close(1008, "quota_exceeded: This request exceeds your quota of 10000.");
    if (msg.close_socket) return enqueue(ws, () => endSocket(ws));
    const id = c.record.multi ? String(msg.context_id ?? "default") : SINGLE_CONTEXT;
    let context = c.contexts.get(id);
    if (!context) {
      // Like ElevenLabs: at most five contexts open or still being generated per socket.
      if (c.record.multi && c.active.size >= 5) return ws.close(1008, "max_active_conversations");
      c.active.add(id);
      c.contexts.set(id, (context = { buffer: "", chunks: 0 }));
    }
    if (msg.close_context) {
      c.contexts.delete(id);
      const rest = context.buffer;
      return enqueue(ws, async () => {
        await generate(ws, rest, id);
        ws.send(JSON.stringify({ isFinal: true, contextId: id }));
        c.active.delete(id);
      });
    }
    if (typeof msg.text !== "string") return ws.close(1008, "Invalid message: text is required");
    if (!c.record.multi && msg.text === "") return enqueue(ws, () => endSocket(ws));
    if (!first || c.record.multi) context.buffer += msg.text;
    const due = msg.flush || msg.try_trigger_generation ? context.buffer.length : readyLength(context.buffer, c.schedule[Math.min(context.chunks, c.schedule.length - 1)]!);
    if (!due || !context.buffer.trim()) return;
    const text = context.buffer.slice(0, due);
    context.buffer = context.buffer.slice(due);
    context.chunks++;
    enqueue(ws, () => generate(ws, text, id));
  }

  /** How much of the buffer is spoken now: up to the last word boundary once `threshold` characters are in. */
  function readyLength(buffer: string, threshold: number): number {
    if (buffer.length < threshold) return 0;
    const boundary = buffer.lastIndexOf(" ");
    return boundary > 0 ? boundary + 1 : 0;
  }

  function enqueue(ws: ServerWebSocket<TtsConn>, job: () => Promise<void> | void) {
    ws.data.work = ws.data.work.then(job).catch(() => {});
  }

  async function endSocket(ws: ServerWebSocket<TtsConn>) {
    for (const [id, context] of ws.data.contexts) await generate(ws, context.buffer, id);
    ws.data.contexts.clear();
    ws.send(JSON.stringify({ isFinal: true }));
    ws.close(1000, "");
  }

  async function generate(ws: ServerWebSocket<TtsConn>, text: string, id: string) {
    const c = ws.data;
    if (!text.trim() || ws.readyState !== 1) return;
    if (c.fault === "malformed") return void ws.send("<html>upstream gateway error</html>");
    const made = pcm(text.trim(), c.rate);
    const speech = made instanceof Promise ? await made : made;
    // MP3 is encoded piece by piece as it goes out, as a streaming synthesizer would.
    const encoder = c.codec === "mp3" ? new Mp3StreamEncoder(c.rate, 128) : undefined;
    const pieceBytes = c.rate * 0.2 * 2;
    const pieces = Math.max(1, Math.ceil(speech.length / pieceBytes));
    const chars = [...text];
    for (let i = 0; i < pieces && ws.readyState === 1; i++) {
      const slice = chars.slice(Math.floor((i * chars.length) / pieces), Math.floor(((i + 1) * chars.length) / pieces));
      const piece = speech.subarray(i * pieceBytes, (i + 1) * pieceBytes);
      // The piece's characters spread evenly over its audio, timed from the piece's start.
      const share = piece.length / 2 / c.rate / Math.max(1, slice.length);
      const alignment = { chars: slice, charStartTimesMs: slice.map((_, k) => Math.round(k * share * 1000)), charDurationsMs: slice.map(() => Math.round(share * 1000)) };
      const audio = encoder ? Buffer.concat([encoder.encode(piece), ...(i === pieces - 1 ? [encoder.flush()] : [])]) : piece;
      if (armed && armed.sent >= armed.after) {
        const { fault } = armed;
        armed = undefined;
        if (fault === "die") return ws.terminate();
        if (fault === "500") return ws.close(1011, "Internal server error");
        return new Promise<void>(() => {}); // hang: the socket stays open, nothing more comes
      }
      if (armed) armed.sent += audio.length;
      if (audio.length) ws.send(JSON.stringify({ audio: Buffer.from(audio).toString("base64"), normalizedAlignment: alignment, alignment, ...(c.record.multi ? { contextId: id } : {}) }));
      if (c.fault === "drop") return ws.close(1011, "Internal server error");
      await Bun.sleep(pauseAfter(piece.length, c.rate * 2, speed));
    }
  }

  // ---- Scribe realtime ----

  function scribeOpen(ws: ServerWebSocket<ScribeConn>) {
    const c = ws.data;
    const q = c.record.query;
    if (!q.get("model_id")) return scribeRefuse(ws, "invalid_request", "model_id is required");
    if (q.get("audio_format") && !AUDIO_FORMATS.includes(q.get("audio_format")!)) return scribeRefuse(ws, "invalid_request", `audio_format ${q.get("audio_format")} is not supported`);
    if (scribeIdleMs !== undefined) {
      c.idle = closeWhenIdle(ws, scribeIdleMs, () => {
        scribeSend(ws, { message_type: "insufficient_audio_activity", error: "No audio was received for too long" });
        ws.close(1008, "insufficient_audio_activity");
      });
    }
    if (c.fault === "stall") return;
    const config = {
      sample_rate: Number((q.get("audio_format") ?? "pcm_16000").split("_")[1]),
      audio_format: q.get("audio_format") ?? "pcm_16000",
      language_code: q.get("language_code"),
      commit_strategy: q.get("commit_strategy") ?? "manual",
      vad_silence_threshold_secs: Number(q.get("vad_silence_threshold_secs") ?? 1.5),
      vad_threshold: Number(q.get("vad_threshold") ?? 0.4),
      min_speech_duration_ms: Number(q.get("min_speech_duration_ms") ?? 100),
      min_silence_duration_ms: Number(q.get("min_silence_duration_ms") ?? 100),
      model_id: q.get("model_id"),
      enable_logging: q.get("enable_logging") !== "false",
      include_timestamps: q.get("include_timestamps") === "true",
      include_language_detection: q.get("include_language_detection") === "true",
      keyterms: q.getAll("keyterms"),
      no_verbatim: q.get("no_verbatim") === "true",
    };
    ws.send(JSON.stringify({ message_type: "session_started", session_id: crypto.randomUUID().replaceAll("-", ""), config }));
  }

  function scribeRefuse(ws: ServerWebSocket<ScribeConn>, type: string, error: string) {
    ws.send(JSON.stringify({ message_type: type, error }));
    ws.close(1008, error);
  }

  function scribeMessage(ws: ServerWebSocket<ScribeConn>, frame: string | Buffer) {
    const c = ws.data;
    c.idle?.heard();
    if (typeof frame !== "string") return scribeSend(ws, { message_type: "input_error", error: "Binary frames are not accepted: send input_audio_chunk messages" });
    c.record.texts.push(frame);
    if (c.fault === "stall") return;
    let msg: Record<string, any>;
    try {
      msg = JSON.parse(frame);
    } catch {
      return scribeSend(ws, { message_type: "input_error", error: "Invalid JSON" });
    }
    if (msg.message_type !== "input_audio_chunk" || typeof msg.audio_base_64 !== "string")
      return scribeSend(ws, { message_type: "input_error", error: "Expected an input_audio_chunk message with audio_base_64" });
    const audio = Buffer.from(msg.audio_base_64, "base64");
    if (audio.length) hear(ws, audio);
    if (msg.commit !== true || ws.readyState !== 1) return;
    if (c.fault === "vad_race" && c.record.query.get("commit_strategy") === "vad" && c.speechMs > 500) {
      c.speechMs -= 500;
      commit(ws);
      c.speechMs = 500;
    }
    commit(ws);
  }

  function hear(ws: ServerWebSocket<ScribeConn>, audio: Buffer) {
    const c = ws.data;
    c.record.audioBytes += audio.length;
    c.record.received.add(audio);
    if (!c.spoke) {
      c.spoke = true;
      if (c.fault === "malformed") ws.send("this is not json");
      if (c.fault === "error") {
        ws.send(JSON.stringify({ message_type: "transcriber_error", error: "The transcriber failed unexpectedly." }));
        return ws.close(1011, "transcriber_error");
      }
    }
    if (c.fault === "drop" && c.record.audioBytes >= c.bytesPerMs * 1000) return ws.close(1011, "Internal server error");
    const ms = audio.length / c.bytesPerMs;
    c.segmentMs += ms;
    if (loud(audio, c.ulaw)) {
      c.speechMs += ms;
      c.silenceMs = 0;
    } else c.silenceMs += ms;
    if (c.speechMs && c.segmentMs - c.partialAtMs >= 500) {
      c.partialAtMs = c.segmentMs;
      scribeSend(ws, { message_type: "partial_transcript", text: words(c.speechMs).join(" ") });
    }
    const q = c.record.query;
    if (q.get("commit_strategy") === "vad" && c.speechMs && c.silenceMs >= Number(q.get("vad_silence_threshold_secs") ?? 1.5) * 1000) commit(ws);
  }

  function commit(ws: ServerWebSocket<ScribeConn>) {
    const c = ws.data;
    const said = c.speechMs ? words(c.speechMs) : [];
    const text = said.length ? `${said.join(" ")}.` : "";
    scribeSend(ws, { message_type: "committed_transcript", text });
    if (c.record.query.get("include_timestamps") === "true") {
      const timed = said.flatMap((w, i) => [
        ...(i ? [{ text: " ", start: i * 0.4 - 0.05, end: i * 0.4, type: "spacing", logprob: 0 }] : []),
        { text: w, start: i * 0.4, end: i * 0.4 + 0.35, type: "word", logprob: -0.1 },
      ]);
      scribeSend(ws, { message_type: "committed_transcript_with_timestamps", text, language_code: "en", words: timed });
    }
    Object.assign(c, { segmentMs: 0, speechMs: 0, silenceMs: 0, partialAtMs: 0 });
  }

  function scribeSend(ws: ServerWebSocket<ScribeConn>, message: Record<string, unknown>) {
    if (ws.readyState === 1) ws.send(JSON.stringify(message));
  }

  /** From now on a Scribe socket that receives nothing for `ms` answers `insufficient_audio_activity` and closes 1008; undefined: never. */
  const closeIdleScribe = (ms: number | undefined) => {
    scribeIdleMs = ms;
  };
  /** TTS: a fault once `after` bytes of audio went out (http-fake.ts `MidStreamFault`; `500` closes 1011 as ElevenLabs does on an internal error); undefined: none. */
  const midStream = (fault: MidStreamFault | undefined) => {
    armed = fault && { ...fault, sent: 0 };
  };
  return { ttsSockets, scribeSockets, upgrade, websocket, closeIdleScribe, midStream };
}

/** One more word of the sentence for every 0.25 s of speech. */
function words(speechMs: number): string[] {
  return SENTENCE.slice(0, Math.max(1, Math.min(SENTENCE.length, Math.ceil(speechMs / 250))));
}

/** Any sample above about -40 dBFS: speech, as far as this fake is concerned. */
function loud(audio: Buffer, ulaw: boolean): boolean {
  if (ulaw) return audio.some((b) => (b & 0x7f) < 0x70);
  for (let i = 0; i + 1 < audio.length; i += 2) if (Math.abs(audio.readInt16LE(i)) > 330) return true;
  return false;
}
