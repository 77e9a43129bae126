import { wavHeader } from "../../src/audio/wav.ts";
import { audioResponse, MidStream, type MidStreamFault, mp3, pauseAfter, refusal, speech as speechAt, type RefusalStatus } from "./http-fake.ts";
import { type FaultControl, serveWithFaults } from "./fault-modes.ts";
import { LOOPBACK_TLS } from "./loopback-tls.ts";
import { startRealtime, type RealtimeConnection, type RealtimeFault } from "./openai-realtime.ts";
import { receivedFile, type AudioDigest } from "./received-audio.ts";

// A fake of OpenAI's audio API on loopback, close enough to the wire that the official `openai`
// SDK works against it: `POST /v1/audio/speech` (JSON in, audio bytes streamed out: pcm = raw
// 24 kHz s16le, mp3, wav) and `POST /v1/audio/transcriptions` (multipart in, json/text/
// verbose_json out). Speech is real (our Flite, resampled to 24 kHz); transcripts are the text
// the fake last spoke, or a fixed sentence; nothing for a WAV of digital silence. Each
// transcription records the digest of the file it received. Errors use OpenAI's error object. Realtime
// transcription sessions (`/v1/realtime?intent=transcription`) are in openai-realtime.ts.
// `startFakeOpenAi({ tls: true })` serves HTTPS/WSS with the loopback self-signed certificate
// (the SDK's realtime clients only connect to wss:). `speechSpeed`: PCM and WAV speech streams at
// that many times real time (a benchmark's provider synthesizing as it sends), else as fast as it goes.
//
// Faults, set with `fault(...)`, apply to the next request only:
//   "refuse" (the server is stopped), "401", "429", "500" (an error answer), "stall" (headers, then
//   nothing; a transcription: no answer at all until the client goes), "drop" (some audio, then the
//   connection is cut), "malformed" (a body that is not what the content type says); for a
//   realtime session also "error" and "failed". Faults kept until healed: `faults.set(...)` (fault-modes.ts).
// A speech fault in the middle of a stream, set with `midStream(...)`, strikes once after a number
// of audio bytes (http-fake.ts `MidStreamFault`: the connection cut, the stream hung, a 500).

export type OpenAiFault = "401" | "429" | "500" | RealtimeFault;

export interface SpeechRequest {
  body: Record<string, unknown>;
  authorization: string | null;
  /** The W3C trace context the router sent (tracing on). */
  traceparent: string | null;
}

export interface FakeOpenAi {
  url: string;
  /** Requests received, as the fake parsed them. */
  speech: SpeechRequest[];
  /** `file`: the digest of the uploaded file's bytes as they arrived. */
  transcriptions: { fields: Record<string, string>; file?: AudioDigest; authorization: string | null; traceparent: string | null }[];
  /** Realtime sessions: handshake, the client's text frames, session updates, audio received. */
  realtime: RealtimeConnection[];
  fault(f: OpenAiFault): void;
  /** Faults kept until healed (fault-modes.ts): refuse, hang, status500. */
  faults: FaultControl;
  /** Speech: a fault once this many audio bytes went out (undefined: none). */
  midStream(f: MidStreamFault | undefined): void;
  /** From now on a realtime transcription session that receives nothing for `ms` is closed 1008 (OpenAI documents no idle limit); undefined: never. */
  closeIdleRealtime(ms: number | undefined): void;
  /** Realtime sockets still open. */
  openSockets(): number;
  /** Requests still open on the fake: a client that forgets to close a connection shows here. */
  openRequests(): number;
  stop(): void;
}

const KEY = "sk-fake-openai";
export const FAKE_OPENAI_KEY = KEY;

const error = (status: number, message: string, type: string, code: string | null = null) => Response.json({ error: { message, type, param: null, code } }, { status });

const refuse = (status: RefusalStatus) =>
  status === 401
    ? error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
    : status === 429
      ? error(429, "Rate limit reached.", "requests", "rate_limit_exceeded")
      : error(500, "The server had an error while processing your request.", "server_error");

export function startFakeOpenAi(options: { tls?: boolean; speechSpeed?: number } = {}): FakeOpenAi & { certificate?: string } {
  const realtime = startRealtime();
  const tls = options.tls ? LOOPBACK_TLS : undefined;
  const speech: SpeechRequest[] = [];
  const transcriptions: FakeOpenAi["transcriptions"] = [];
  let pending: OpenAiFault | undefined;
  const midStream = new MidStream();
  let lastSpoken = "Thank you very much for your help.";
  // Speech made once per text and format: a busy benchmark measures the router, not Flite.
  const made = new Map<string, Uint8Array>();

  const served = serveWithFaults(() => refuse(500), {
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    tls,
    websocket: realtime.websocket,
    async fetch(req, srv) {
      const url = new URL(req.url);
      const authorization = req.headers.get("authorization");
      const fault = pending;
      pending = undefined;
      if (url.pathname === "/v1/realtime") {
        return refusal(realtime.presentedKey(req) === KEY, fault, refuse) ?? realtime.accept(req, srv, fault as RealtimeFault | undefined);
      }
      const refused = refusal(authorization === `Bearer ${KEY}`, fault, refuse);
      if (refused) return refused;

      if (req.method === "POST" && url.pathname === "/v1/audio/speech") {
        const body = (await req.json()) as Record<string, unknown>;
        speech.push({ body, authorization, traceparent: req.headers.get("traceparent") });
        if (midStream.refuses()) return refuse(500);
        if (typeof body.input !== "string" || !body.input) return error(400, "input is required", "invalid_request_error");
        if (typeof body.voice !== "string") return error(400, "voice is required", "invalid_request_error");
        lastSpoken = body.input;
        const format = (body.response_format as string) ?? "mp3";
        const types: Record<string, string> = { pcm: "audio/pcm", wav: "audio/wav", mp3: "audio/mpeg" };
        const type = types[format];
        if (!type) return error(400, `response_format ${format} is not supported by this fake`, "invalid_request_error");
        const key = `${format}\n${body.input}`;
        let audio = made.get(key);
        if (!audio) {
          const pcm = speechAt(body.input, 24000);
          audio = format === "pcm" ? pcm : format === "wav" ? Buffer.concat([wavHeader(24000, 1, pcm.byteLength), pcm]) : mp3(pcm, 24000);
          made.set(key, audio);
        }
        if (fault === "stall" || fault === "drop" || fault === "malformed") return audioResponse(audio, type, fault);
        const speed = format === "mp3" ? undefined : options.speechSpeed;
        return midStream.response(audio, type, (bytes) => pauseAfter(bytes, 24000 * 2, speed));
      }

      if (req.method === "POST" && url.pathname === "/v1/audio/transcriptions") {
        const form = await req.formData();
        const fields: Record<string, string> = {};
        for (const [k, v] of form) if (typeof v === "string") fields[k] = v;
        const file = form.get("file");
        const received = file instanceof Blob ? receivedFile(await file.bytes()) : undefined;
        transcriptions.push({ fields, file: received?.digest, authorization, traceparent: req.headers.get("traceparent") });
        if (!received) return error(400, "file is required", "invalid_request_error");
        // Never answered: the request stays open until its client goes.
        if (fault === "stall") return new Promise<Response>((resolve) => req.signal.addEventListener("abort", () => resolve(new Response(null))));
        if (fault === "malformed") return new Response("{not json", { headers: { "content-type": "application/json" } });
        const text = received.silent ? "" : lastSpoken;
        const format = fields.response_format ?? "json";
        if (format === "text") return new Response(`${text}\n`, { headers: { "content-type": "text/plain" } });
        if (format === "verbose_json") {
          return Response.json({
            task: "transcribe",
            language: "english",
            duration: 2.7,
            text,
            segments: text ? [{ id: 0, seek: 0, start: 0, end: 2.7, text, tokens: [], temperature: 0, avg_logprob: -0.2, compression_ratio: 1, no_speech_prob: 0.01 }] : [],
          });
        }
        return Response.json({ text, usage: { type: "duration", seconds: 3 } });
      }
      return error(404, `Invalid URL (${req.method} ${url.pathname})`, "invalid_request_error");
    },
  });
  return {
    url: `${tls ? "https" : "http"}://127.0.0.1:${served.server().port}/v1`,
    certificate: tls?.cert,
    speech,
    transcriptions,
    realtime: realtime.connections,
    fault: (f) => (pending = f),
    faults: served.faults,
    midStream: (f) => midStream.set(f),
    closeIdleRealtime: realtime.closeIdle,
    openSockets: () => served.server().pendingWebSockets,
    openRequests: () => served.server().pendingRequests,
    stop: served.stop,
  };
}
