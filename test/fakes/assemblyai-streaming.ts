import type { Server, ServerWebSocket, WebSocketHandler } from "bun";
import { refusal, speech, type RefusalStatus } from "./http-fake.ts";
import { type MidStreamFault, withMidStreamFault } from "./mid-stream-faults.ts";
import { ReceivedAudio } from "./received-audio.ts";

// AssemblyAI Universal-Streaming v3 (`/v3/ws`), mounted on the AssemblyAI fake. Close enough for
// the official SDK's StreamingTranscriber: `Authorization: <key>` on the upgrade; query
// `sample_rate`, `encoding` (`pcm_s16le` | `pcm_mulaw`), `format_turns`,
// `end_of_turn_confidence_threshold` (default 0.4), `min_turn_silence` (400), `max_turn_silence`
// (1280); `Begin` first; audio in binary frames of 50–1000 ms (others: `Error` 3007 and close).
// The audio's loudness decides speech: `SpeechStarted` when a turn begins, a growing `Turn`
// every 400 ms of it (`turn_order`, words timed in ms, only final words in `transcript`), and the
// end of the turn after a pause — `min_turn_silence` when the turn looks complete (3+ words:
// confidence 0.9 against the threshold), else `max_turn_silence` — or at `ForceEndpoint` /
// `Terminate`; with `format_turns=true` a formatted copy follows the end. `Terminate` →
// `Termination`, close 1000. `KeepAlive` is accepted silently.
//
// Faults for the next connection: "401" / "429" / "500" (the handshake answers that status),
// "close-4001" / "close-4029" (accepted, then closed with that code before `Begin`), "stall"
// (`Begin`, then silence), "drop" (the connection is cut after 1 s of audio), "drop-after-turn"
// (cut right after the first end of turn), "malformed" (a
// non-JSON frame after the first audio), "error-frame" (an `Error` frame after the first audio).
// Mid-stream faults (mid-stream-faults.ts: `kill`, `hang`, `error`) for the connections opened
// while one is set.

export type AssemblyAiStreamingFault = "401" | "429" | "500" | "close-4001" | "close-4029" | "stall" | "drop" | "drop-after-turn" | "malformed" | "error-frame";

export interface StreamingConnection {
  query: URLSearchParams;
  authorization: string | null;
  /** Text frames from the client, as sent. */
  texts: string[];
  /** Binary frames from the client, as received. */
  audio: Uint8Array[];
  audioBytes: number;
  /** The audio's digest, in arrival order. */
  received: ReceivedAudio;
  /** The close code, once the connection closed (either side). */
  closed?: number;
}

interface Conn extends StreamingConnection {
  fault?: AssemblyAiStreamingFault;
  bytesPerMs: number;
  mulaw: boolean;
  turnOrder: number;
  /** The turn under way: where it started, where speech was last heard, when the last Turn went out. */
  turn?: { startMs: number; lastSpeechMs: number; sentAtMs: number };
  spoke: boolean;
  stalled: boolean;
  /** How its frames are taken: with the mid-stream fault set when it opened. */
  frames: { message(ws: ServerWebSocket<Conn>, frame: string | Buffer): void };
}

/** Audio per recognized word: Flite says the sentence in about 1.7 s of speech. */
const WORD_MS = 240;
const SENTENCE = "thank you very much for your help".split(" ");
const FORMATTED = "Thank you very much for your help.".split(" ");
const CLOSE_REASONS = { 4000: "Sample rate must be a positive integer", 4001: "Not Authorized", 4029: "Too Many Concurrent Sessions" } as const;
const REFUSALS = { 401: "Invalid API key", 429: "Too many requests", 500: "Internal server error" } as const;

const ms = (c: Conn) => c.audioBytes / c.bytesPerMs;
const num = (q: URLSearchParams, name: string, fallback: number) => Number(q.get(name) ?? fallback);

/** Mean absolute amplitude of a frame, as 16-bit samples (µ-law decoded). */
function loudness(frame: Uint8Array, mulaw: boolean): number {
  let sum = 0;
  if (mulaw) {
    for (const b of frame) {
      const u = ~b & 0xff;
      sum += (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
    }
    return sum / Math.max(1, frame.length);
  }
  const samples = new Int16Array(frame.buffer.slice(frame.byteOffset, frame.byteOffset + (frame.byteLength & ~1)));
  for (const s of samples) sum += Math.abs(s);
  return sum / Math.max(1, samples.length);
}

function turnMessage(c: Conn, end: boolean, formatted = false) {
  const t = c.turn!;
  const count = Math.max(1, Math.min(SENTENCE.length, Math.ceil((t.lastSpeechMs - t.startMs) / WORD_MS)));
  const span = Math.max(1, t.lastSpeechMs - t.startMs) / count;
  const texts = (formatted ? FORMATTED : SENTENCE).slice(0, count);
  if (formatted && count < SENTENCE.length) texts[count - 1] += ".";
  const words = texts.map((text, i) => ({
    start: Math.round(t.startMs + i * span),
    end: Math.round(t.startMs + (i + 0.8) * span),
    confidence: 0.97,
    text,
    word_is_final: end || i < count - 1,
  }));
  return JSON.stringify({
    type: "Turn",
    turn_order: c.turnOrder,
    turn_is_formatted: formatted,
    end_of_turn: end,
    transcript: words
      .filter((w) => w.word_is_final)
      .map((w) => w.text)
      .join(" "),
    end_of_turn_confidence: end ? confidence(count) : Math.min(0.3, confidence(count)),
    words,
    ...(c.query.get("speaker_labels") === "true" ? { speaker_label: "A" } : {}),
  });
}

const confidence = (words: number) => (words >= 3 ? 0.9 : 0.2);

function endTurn(ws: ServerWebSocket<Conn>) {
  const c = ws.data;
  if (!c.turn) return;
  ws.send(turnMessage(c, true));
  if (c.query.get("format_turns") === "true") ws.send(turnMessage(c, true, true));
  c.turn = undefined;
  c.turnOrder++;
  if (c.fault === "drop-after-turn") ws.terminate();
}

function onAudio(ws: ServerWebSocket<Conn>, frame: Uint8Array) {
  const c = ws.data;
  const frameMs = frame.byteLength / c.bytesPerMs;
  if (frameMs < 50 || frameMs > 1000) {
    ws.send(JSON.stringify({ type: "Error", error_code: 3007, error: `Input Duration Violation: ${frameMs.toFixed(0)} ms. Expected between 50 and 1000 ms.` }));
    return ws.close(3007, "Input duration violation");
  }
  if (ws.readyState !== WebSocket.OPEN) return;
  const startMs = ms(c);
  c.audio.push(frame);
  c.audioBytes += frame.byteLength;
  c.received.add(frame);
  if (c.stalled) return;
  if (!c.spoke) {
    c.spoke = true;
    if (c.fault === "malformed") ws.send("<html>bad gateway</html>");
    if (c.fault === "error-frame") ws.send(JSON.stringify({ type: "Error", error_code: 3005, error: "Internal server error while transcribing" }));
  }
  if (c.fault === "drop" && ms(c) >= 1000) return ws.terminate();
  const now = ms(c);
  if (loudness(frame, c.mulaw) > 300) {
    if (!c.turn) {
      c.turn = { startMs, lastSpeechMs: now, sentAtMs: startMs };
      ws.send(JSON.stringify({ type: "SpeechStarted", timestamp: Math.round(startMs), confidence: 0.9 }));
    }
    c.turn.lastSpeechMs = now;
  }
  const t = c.turn;
  if (!t) return;
  const words = Math.ceil((t.lastSpeechMs - t.startMs) / WORD_MS);
  const threshold = num(c.query, "end_of_turn_confidence_threshold", 0.4);
  const patience = confidence(words) >= threshold ? num(c.query, "min_turn_silence", 400) : num(c.query, "max_turn_silence", 1280);
  if (now - t.lastSpeechMs >= patience) return endTurn(ws);
  if (now - t.sentAtMs >= 400) {
    t.sentAtMs = now;
    ws.send(turnMessage(c, false));
  }
}

function parseType(text: string): unknown {
  try {
    return JSON.parse(text)?.type;
  } catch {
    return undefined;
  }
}

function onText(ws: ServerWebSocket<Conn>, text: string) {
  const c = ws.data;
  c.texts.push(text);
  if (c.stalled) return;
  const type = parseType(text);
  if (type === "ForceEndpoint") endTurn(ws);
  else if (type === "Terminate") {
    endTurn(ws);
    ws.send(JSON.stringify({ type: "Termination", audio_duration_seconds: Math.round(ms(c) / 1000), session_duration_seconds: Math.round(ms(c) / 1000) }));
    ws.close(1000, "");
  }
}

/** Test audio this fake hears as one turn: the spoken sentence (16-bit PCM), then silence, in 100 ms chunks. */
export function spokenChunks(rate = 16000, silenceMs = 1000): Uint8Array[] {
  const pcm = speech(SENTENCE.join(" "), rate);
  const all = new Uint8Array(pcm.length + Math.round((rate * 2 * silenceMs) / 1000));
  all.set(pcm);
  const chunk = rate / 5;
  const out: Uint8Array[] = [];
  for (let i = 0; i + chunk <= all.length; i += chunk) out.push(all.slice(i, i + chunk));
  return out;
}

export interface AssemblyAiStreaming {
  connections: StreamingConnection[];
  /** Answers a `/v3/ws` request: a refusal, or the upgrade. */
  handshake(req: Request, url: URL, server: Server<Conn>, fault: AssemblyAiStreamingFault | undefined, key: string, midStream?: MidStreamFault): Response | undefined;
  websocket: WebSocketHandler<Conn>;
}

function taken(ws: ServerWebSocket<Conn>, frame: string | Buffer): void {
  if (typeof frame === "string") onText(ws, frame);
  else onAudio(ws, new Uint8Array(frame));
}

export function assemblyAiStreaming(): AssemblyAiStreaming {
  const connections: StreamingConnection[] = [];
  return {
    connections,
    handshake(req, url, server, fault, key, midStream) {
      const authorization = req.headers.get("authorization");
      const refused = refusal(authorization === key, fault, (status: RefusalStatus) => Response.json({ error: REFUSALS[status] }, { status }));
      if (refused) return refused;
      const q = url.searchParams;
      const mulaw = q.get("encoding") === "pcm_mulaw";
      const conn: Conn = {
        query: q,
        authorization,
        texts: [],
        audio: [],
        audioBytes: 0,
        received: new ReceivedAudio(mulaw ? "mulaw" : "pcm_s16le"),
        fault,
        bytesPerMs: (num(q, "sample_rate", 0) * (mulaw ? 1 : 2)) / 1000,
        mulaw,
        turnOrder: 0,
        spoke: false,
        stalled: fault === "stall",
        frames: withMidStreamFault({ message: taken }, midStream, num(q, "sample_rate", 0) * (mulaw ? 1 : 2), (ws) =>
          ws.send(JSON.stringify({ type: "Error", error_code: 3005, error: "Internal server error while transcribing" })),
        ),
      };
      connections.push(conn);
      return server.upgrade(req, { data: conn }) ? undefined : new Response("upgrade failed", { status: 400 });
    },
    websocket: {
      open(ws) {
        const c = ws.data;
        if (c.fault === "close-4001" || c.fault === "close-4029") return ws.close(Number(c.fault.slice(6)), CLOSE_REASONS[c.fault === "close-4001" ? 4001 : 4029]);
        if (!(c.bytesPerMs > 0)) return ws.close(4000, CLOSE_REASONS[4000]);
        ws.send(JSON.stringify({ type: "Begin", id: crypto.randomUUID(), expires_at: Math.floor(Date.now() / 1000) + 3600 }));
      },
      message: (ws, frame) => ws.data.frames.message(ws, frame),
      close(ws, code) {
        ws.data.closed = code;
      },
    },
  };
}
