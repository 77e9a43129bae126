import type { Server, ServerWebSocket, WebSocketHandler } from "bun";
import { closeWhenIdle } from "./idle-close.ts";
import { ReceivedAudio } from "./received-audio.ts";

// OpenAI's realtime transcription sessions (GA protocol) for the OpenAI fake: `GET /v1/realtime?
// intent=transcription` upgraded with `Authorization: Bearer <key>` (or the browser subprotocol
// `openai-insecure-api-key.<key>`). `session.created` on connect, `session.update` answered with
// `session.updated` (invalid settings with an `error` event); audio in `input_audio_buffer.append`
// (base64). The server VAD is simulated from the audio's energy in 10 ms windows: speech_started
// (with the prefix padding), speech_stopped after `silence_duration_ms` of quiet (semantic VAD:
// a wait by eagerness), then `input_audio_buffer.committed` (and `conversation.item.added` /
// `.done`, which a transcription client ignores) and the item's transcription:
// word-by-word `…transcription.delta` events and `…transcription.completed`. With
// `turn_detection: null` only `input_audio_buffer.commit` commits (less than 100 ms buffered: the
// `input_audio_buffer_commit_empty` error). `input_audio_buffer.clear` → `input_audio_buffer.cleared`.
// Transcripts are the words of a fixed sentence, about 4.5 per second of speech heard (none for
// a buffer without speech).
//
// Faults for the next connection, besides the handshake refusals of openai.ts: "stall" (nothing
// more after session.updated), "drop" (the connection is cut after 1 s of audio), "malformed" (a
// non-JSON frame after the first audio), "error" (an `error` event after the first audio, then
// close 1011), "failed" (the first transcription fails with `…transcription.failed`).

export type RealtimeFault = "stall" | "drop" | "malformed" | "error" | "failed";

export interface RealtimeConnection {
  query: URLSearchParams;
  authorization: string | null;
  /** The W3C trace context of the handshake (a router with tracing on sends it). */
  traceparent: string | null;
  protocols: string | null;
  /** Every text frame the client sent, as it came. */
  frames: string[];
  /** The `session` of each `session.update`. */
  updates: Record<string, any>[];
  audioBytes: number;
  /** The digest of the audio its appends carried, in arrival order. */
  received: ReceivedAudio;
  fault?: RealtimeFault;
}

interface Conn extends RealtimeConnection {
  session: Record<string, any>;
  clockMs: number;
  bufferMs: number;
  /** Of the buffered audio, how much was loud enough to be speech. */
  bufferSpeechMs: number;
  speaking: boolean;
  silenceMs: number;
  itemId: string;
  lastItemId: string | null;
  transcriptions: number;
  idle?: { heard(): void };
}

const WORDS = "Thank you very much for your help".split(" ");
const MODELS = ["whisper-1", "gpt-4o-transcribe", "gpt-4o-mini-transcribe", "gpt-4o-mini-transcribe-2025-12-15", "gpt-4o-transcribe-diarize", "gpt-realtime-whisper"];
const SEMANTIC_WAIT_MS: Record<string, number> = { low: 1000, medium: 600, auto: 600, high: 300 };
const DEFAULT_VAD = { type: "server_vad", threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500, idle_timeout_ms: null, create_response: false, interrupt_response: false };

let counter = 0;
const id = (prefix: string) => `${prefix}_fake${(++counter).toString(36).padStart(6, "0")}`;

const userItem = (itemId: string, transcript: string | null) => ({
  id: itemId,
  object: "realtime.item",
  type: "message",
  status: "completed",
  role: "user",
  content: [{ type: "input_audio", transcript }],
});

function ulawToLinear(u: number): number {
  const v = ~u & 0xff;
  const magnitude = (((v & 0x0f) << 3) + 0x84) << ((v >> 4) & 7);
  return v & 0x80 ? 0x84 - magnitude : magnitude - 0x84;
}

/** Root-mean-square level of each 10 ms window of the audio. */
function windowLevels(audio: Uint8Array, format: Record<string, any>): number[] {
  const ulaw = format.type !== "audio/pcm";
  const samples = ulaw ? audio.length : audio.length >> 1;
  const perWindow = ulaw ? 80 : 240;
  const view = new DataView(audio.buffer, audio.byteOffset, audio.byteLength);
  const levels: number[] = [];
  for (let start = 0; start < samples; start += perWindow) {
    let sum = 0;
    const end = Math.min(samples, start + perWindow);
    for (let i = start; i < end; i++) {
      const s = ulaw ? ulawToLinear(audio[i]) : view.getInt16(i * 2, true);
      sum += s * s;
    }
    levels.push(Math.sqrt(sum / (end - start)));
  }
  return levels;
}

export function startRealtime() {
  const connections: RealtimeConnection[] = [];
  /** See `closeIdle`. */
  let idleMs: number | undefined;

  const send = (ws: ServerWebSocket<Conn>, event: Record<string, unknown>) => {
    if (ws.readyState === 1) ws.send(JSON.stringify({ event_id: id("event"), ...event }));
  };
  const error = (ws: ServerWebSocket<Conn>, type: string, code: string | null, message: string, param: string | null = null) =>
    send(ws, { type: "error", error: { type, code, message, param, event_id: null } });

  function transcribe(ws: ServerWebSocket<Conn>, itemId: string, speechMs: number) {
    const c = ws.data;
    const first = c.transcriptions++ === 0;
    setTimeout(() => {
      if (c.fault === "stall") return;
      if (first && c.fault === "failed") {
        return send(ws, {
          type: "conversation.item.input_audio_transcription.failed",
          item_id: itemId,
          content_index: 0,
          error: { type: "server_error", code: null, message: "Transcription failed.", param: null },
        });
      }
      const words = WORDS.slice(0, Math.min(WORDS.length, Math.ceil((speechMs / 1000) * 4.5)));
      for (const [i, w] of words.entries()) send(ws, { type: "conversation.item.input_audio_transcription.delta", item_id: itemId, content_index: 0, delta: i ? ` ${w}` : w });
      const transcript = words.length ? `${words.join(" ")}${words.length === WORDS.length ? "." : ""}` : "";
      send(ws, { type: "conversation.item.done", previous_item_id: null, item: userItem(itemId, transcript) });
      send(ws, {
        type: "conversation.item.input_audio_transcription.completed",
        item_id: itemId,
        content_index: 0,
        transcript,
        usage: {
          type: "tokens",
          input_tokens: Math.ceil(speechMs / 100),
          output_tokens: words.length * 2,
          total_tokens: Math.ceil(speechMs / 100) + words.length * 2,
          input_token_details: { audio_tokens: Math.ceil(speechMs / 100), text_tokens: 0 },
        },
      });
    }, 5);
  }

  function commit(ws: ServerWebSocket<Conn>, itemId: string) {
    const c = ws.data;
    const speechMs = c.bufferSpeechMs;
    send(ws, { type: "input_audio_buffer.committed", item_id: itemId, previous_item_id: c.lastItemId });
    send(ws, { type: "conversation.item.added", previous_item_id: c.lastItemId, item: userItem(itemId, null) });
    c.lastItemId = itemId;
    c.bufferMs = 0;
    c.bufferSpeechMs = 0;
    c.speaking = false;
    c.itemId = id("item");
    transcribe(ws, itemId, speechMs);
  }

  /** The simulated server / semantic VAD over one appended chunk. */
  function detect(ws: ServerWebSocket<Conn>, audio: Uint8Array) {
    const c = ws.data;
    const input = c.session.audio.input;
    const vad = input.turn_detection;
    for (const level of windowLevels(audio, input.format)) {
      const speech = level > 1200 * (vad?.threshold ?? 0.5);
      c.clockMs += 10;
      c.bufferMs += 10;
      if (speech) c.bufferSpeechMs += 10;
      if (!vad || c.fault === "stall") continue;
      if (!c.speaking) {
        if (!speech) continue;
        c.speaking = true;
        c.silenceMs = 0;
        send(ws, { type: "input_audio_buffer.speech_started", audio_start_ms: Math.max(0, c.clockMs - 10 - (vad.prefix_padding_ms ?? 300)), item_id: c.itemId });
        continue;
      }
      c.silenceMs = speech ? 0 : c.silenceMs + 10;
      const wait = vad.type === "semantic_vad" ? SEMANTIC_WAIT_MS[vad.eagerness ?? "auto"] : (vad.silence_duration_ms ?? 500);
      if (c.silenceMs >= wait) {
        send(ws, { type: "input_audio_buffer.speech_stopped", audio_end_ms: c.clockMs, item_id: c.itemId });
        commit(ws, c.itemId);
      }
    }
  }

  function update(ws: ServerWebSocket<Conn>, session: Record<string, any> | undefined) {
    const c = ws.data;
    if (session?.type !== "transcription") return error(ws, "invalid_request_error", "invalid_value", "session.type must be 'transcription' on a transcription session.", "session.type");
    const input = session.audio?.input ?? {};
    const format = input.format;
    if (format && !(format.type === "audio/pcm" ? format.rate === 24000 : format.type === "audio/pcmu" || format.type === "audio/pcma")) {
      return error(ws, "invalid_request_error", "invalid_value", "Invalid audio format: audio/pcm at 24000 Hz, audio/pcmu or audio/pcma.", "session.audio.input.format");
    }
    if (input.transcription?.model !== undefined && !MODELS.includes(input.transcription.model)) {
      return error(
        ws,
        "invalid_request_error",
        "invalid_value",
        `Invalid value: '${input.transcription.model}'. Supported values are: ${MODELS.map((m) => `'${m}'`).join(", ")}.`,
        "session.audio.input.transcription.model",
      );
    }
    const td = input.turn_detection;
    if (td && td.type !== "server_vad" && td.type !== "semantic_vad")
      return error(ws, "invalid_request_error", "invalid_value", "Invalid turn_detection type.", "session.audio.input.turn_detection.type");
    const merged = { ...c.session.audio.input, ...input };
    if (td?.type === "server_vad") merged.turn_detection = { ...DEFAULT_VAD, ...td };
    c.session = { ...c.session, ...session, audio: { input: merged } };
    send(ws, { type: "session.updated", session: c.session });
  }

  const websocket: WebSocketHandler<Conn> = {
    open(ws) {
      if (idleMs !== undefined) ws.data.idle = closeWhenIdle(ws, idleMs, () => ws.close(1008, "session idle for too long"));
      send(ws, { type: "session.created", session: ws.data.session });
    },
    message(ws, frame) {
      const c = ws.data;
      c.idle?.heard();
      if (typeof frame !== "string") return error(ws, "invalid_request_error", "invalid_json", "Binary frames are not supported; send JSON events.");
      c.frames.push(frame);
      let ev: Record<string, any>;
      try {
        ev = JSON.parse(frame);
      } catch {
        return error(ws, "invalid_request_error", "invalid_json", "The server could not parse the JSON event.");
      }
      if (c.fault === "stall" && ev.type !== "session.update" && ev.type !== "input_audio_buffer.append") return;
      switch (ev.type) {
        case "session.update":
          c.updates.push(ev.session);
          return update(ws, ev.session);
        case "input_audio_buffer.append": {
          const audio = Buffer.from(String(ev.audio ?? ""), "base64");
          const firstAudio = c.audioBytes === 0;
          c.audioBytes += audio.length;
          c.received.add(audio);
          if (firstAudio && c.fault === "malformed") ws.send("this is not json");
          if (firstAudio && c.fault === "error") {
            error(ws, "server_error", null, "The server had an error while processing your request.");
            return ws.close(1011, "server_error");
          }
          detect(ws, audio);
          if (c.fault === "drop" && c.clockMs >= 1000) ws.terminate();
          return;
        }
        case "input_audio_buffer.commit":
          if (c.bufferMs < 100) {
            return error(
              ws,
              "invalid_request_error",
              "input_audio_buffer_commit_empty",
              `Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has ${c.bufferMs.toFixed(2)}ms of audio.`,
            );
          }
          return commit(ws, c.itemId);
        case "input_audio_buffer.clear":
          c.bufferMs = 0;
          c.bufferSpeechMs = 0;
          c.speaking = false;
          c.itemId = id("item");
          return send(ws, { type: "input_audio_buffer.cleared" });
        default:
          return error(ws, "invalid_request_error", "invalid_value", `Invalid value: '${ev.type}'. This event type is not supported on a transcription session.`, "type");
      }
    },
  };

  /** Upgrades `GET /v1/realtime` for an authorized client; a Response when it refuses. */
  function accept(req: Request, server: Server<Conn>, fault: RealtimeFault | undefined): Response | undefined {
    const url = new URL(req.url);
    if (url.searchParams.get("intent") !== "transcription") {
      return Response.json(
        { error: { message: "This fake serves transcription sessions only (?intent=transcription).", type: "invalid_request_error", param: "intent", code: null } },
        { status: 400 },
      );
    }
    const protocols = req.headers.get("sec-websocket-protocol");
    const conn: Conn = {
      query: url.searchParams,
      authorization: req.headers.get("authorization"),
      traceparent: req.headers.get("traceparent"),
      protocols,
      frames: [],
      updates: [],
      audioBytes: 0,
      received: new ReceivedAudio(),
      fault,
      session: {
        type: "transcription",
        id: id("sess"),
        object: "realtime.transcription_session",
        expires_at: Math.floor(Date.now() / 1000) + 3600,
        audio: { input: { format: { type: "audio/pcm", rate: 24000 }, transcription: null, noise_reduction: null, turn_detection: DEFAULT_VAD } },
        include: null,
      },
      clockMs: 0,
      bufferMs: 0,
      bufferSpeechMs: 0,
      speaking: false,
      silenceMs: 0,
      itemId: id("item"),
      lastItemId: null,
      transcriptions: 0,
    };
    connections.push(conn);
    const headers = protocols?.split(",").some((p) => p.trim() === "realtime") ? { "Sec-WebSocket-Protocol": "realtime" } : undefined;
    return server.upgrade(req, { data: conn, headers }) ? undefined : new Response("upgrade failed", { status: 400 });
  }

  /** The key a realtime client presented: the header, or the browser subprotocol. */
  const presentedKey = (req: Request) =>
    req.headers.get("authorization")?.replace(/^Bearer /, "") ??
    req.headers
      .get("sec-websocket-protocol")
      ?.split(",")
      .map((p) => p.trim())
      .find((p) => p.startsWith("openai-insecure-api-key."))
      ?.slice("openai-insecure-api-key.".length);

  /** From now on a session that receives nothing for `ms` is closed (OpenAI documents no idle limit); undefined: never. */
  const closeIdle = (ms: number | undefined) => {
    idleMs = ms;
  };
  return { connections, websocket, accept, presentedKey, closeIdle };
}
