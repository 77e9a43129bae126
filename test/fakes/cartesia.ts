import { LOOPBACK_TLS } from "./loopback-tls.ts";
import { cartesiaVoices, type CartesiaCloneRecord } from "./cartesia-voices.ts";
import { realtimeHandlers, sttConn, sttQueryProblem, ttsConn, type RealtimeConn, type SocketFault, type SttSocketRecord, type TtsSocketRecord } from "./cartesia-realtime.ts";
import { ReceivedAudio, receivedFile, type AudioDigest } from "./received-audio.ts";
import type { CloningFault } from "./cloning.ts";
import { audioResponse, mp3, refusal, speech, type RefusalStatus, type StreamFault } from "./http-fake.ts";

// A fake of Cartesia on loopback, close enough for the official `@cartesia/cartesia-js` SDK:
// `Authorization: Bearer <key>` and a `Cartesia-Version` header (or, as browsers send them, the
// `api_key` and `cartesia_version` query parameters on a WebSocket). `POST /tts/bytes`: JSON
// `{model_id, transcript, voice, output_format}` in (raw pcm_s16le at any rate, or mp3), audio
// bytes streamed out; `GET /voices` lists one voice; batch `POST /stt` (multipart `file`, `model`)
// answers a fixed sentence with word timings (no words for a WAV of digital silence) and records
// the digest of the file it received; the realtime `/tts/websocket` and `/stt/websocket`
// are in cartesia-realtime.ts. Speech is real (our Flite, resampled). Errors use Cartesia's
// `{title, message, error_code, request_id}`.
//
// Faults for the next request or connection: "401", "429", "500" (a WebSocket handshake is
// answered with that status), the streaming faults of http-fake.ts for HTTP audio, and the
// socket faults of cartesia-realtime.ts ("stall", "drop", "malformed", "error"). Instant voice
// cloning, its voices and its "slow" fault are in cartesia-voices.ts.

export type CartesiaFault = "401" | "429" | "500" | StreamFault | SocketFault | CloningFault;

export const FAKE_CARTESIA_KEY = "sk_car_fake";
export const FAKE_CARTESIA_VOICE = "694f9389-aac1-45b6-b726-9d9369183238";

export interface FakeCartesia {
  /** `http://…`, or `https://…` when started with TLS. */
  url: string;
  /** What `GET /voices` lists, page by page (`limit`, `starting_after`), in Cartesia's shape: change it to change the account's voices. */
  voices: Record<string, unknown>[];
  requests: { body: Record<string, any>; authorization: string | null; version: string | null }[];
  /** `file`: the digest of the uploaded file's bytes as they arrived. */
  transcriptions: { fields: Record<string, string[]>; file?: AudioDigest }[];
  /** Realtime connections, in order. */
  ttsSockets: TtsSocketRecord[];
  sttSockets: SttSocketRecord[];
  /** Instant clones the fake holds, by id: made by `POST /voices/clone`, gone after their `DELETE`. */
  clonedVoices: Map<string, CartesiaCloneRecord>;
  fault(f: CartesiaFault): void;
  /** From now on an STT socket that receives nothing for `ms` is closed 1008 (Cartesia's idle limit is not documented); undefined: never. */
  closeIdleStt(ms: number | undefined): void;
  /** HTTP requests and WebSockets still open: a client that forgets to close one shows here. */
  openRequests(): number;
  openSockets(): number;
  stop(): void;
}

const STT_WORDS = ["Thank", "you", "very", "much.", "For", "your", "help."];

const error = (status: number, error_code: string, message: string) =>
  Response.json({ title: message, message, error_code, doc_url: "https://docs.cartesia.ai", request_id: crypto.randomUUID() }, { status });

const REFUSALS = { 401: ["unauthorized", "Invalid API key"], 429: ["rate_limited", "Too many requests"], 500: ["internal_error", "Internal server error"] } as const;
const refuse = (status: RefusalStatus) => error(status, REFUSALS[status][0], REFUSALS[status][1]);

function voiceId(voice: unknown): string | undefined {
  if (typeof voice === "string") return voice;
  if (voice && typeof voice === "object" && typeof (voice as { id?: unknown }).id === "string") return (voice as { id: string }).id;
}

/** `tls`: serve https/wss with the fake's self-signed certificate (for SDK helpers that insist on wss). */
export function startFakeCartesia(options: { tls?: boolean } = {}): FakeCartesia {
  const requests: FakeCartesia["requests"] = [];
  const transcriptions: FakeCartesia["transcriptions"] = [];
  const ttsSockets: TtsSocketRecord[] = [];
  const sttSockets: SttSocketRecord[] = [];
  const made = new Map<string, Uint8Array>();
  const spoken = new Map<string, Uint8Array>();
  let pending: CartesiaFault | undefined;
  let sttIdleMs: number | undefined;
  const premade: Record<string, unknown>[] = [{ id: FAKE_CARTESIA_VOICE, name: "Katie", language: "en", description: "A friendly voice", gender: "feminine", is_owner: false, is_public: true }];
  const voices = cartesiaVoices(premade, error);
  speech("Ready.", 24000); // the first synthesis is slow: not while a session's liveness timer runs
  const server = Bun.serve<RealtimeConn>({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    ...(options.tls ? { tls: LOOPBACK_TLS } : {}),
    async fetch(req, srv) {
      const url = new URL(req.url);
      const apiKey = url.searchParams.get("api_key");
      const authorization = req.headers.get("authorization") ?? (apiKey ? `Bearer ${apiKey}` : null);
      const version = req.headers.get("cartesia-version") ?? url.searchParams.get("cartesia_version");
      const fault = pending;
      pending = undefined;
      if (authorization !== `Bearer ${FAKE_CARTESIA_KEY}` || fault === "401") return refuse(401);
      if (!version) return error(400, "missing_version", "Cartesia-Version header is required");
      if (url.pathname === "/tts/websocket" || url.pathname === "/stt/websocket") {
        const refused = refusal(true, fault, refuse);
        if (refused) return refused;
        const socketFault = fault === "stall" || fault === "drop" || fault === "malformed" || fault === "error" ? fault : undefined;
        let conn: RealtimeConn;
        if (url.pathname === "/tts/websocket") {
          const record = { authorization, version, messages: [] };
          ttsSockets.push(record);
          conn = ttsConn(record, socketFault, voices.has, spoken);
        } else {
          const problem = sttQueryProblem(url.searchParams);
          if (problem) return error(400, "invalid_request", problem);
          const record = {
            query: url.searchParams,
            authorization,
            version,
            texts: [],
            audioBytes: 0,
            received: new ReceivedAudio(url.searchParams.get("encoding") === "pcm_mulaw" ? "mulaw" : "pcm_s16le"),
          };
          sttSockets.push(record);
          conn = sttConn(record, socketFault, sttIdleMs);
        }
        return srv.upgrade(req, { data: conn }) ? undefined : error(400, "upgrade_required", "Expected a WebSocket upgrade");
      }
      if (req.method === "GET" && url.pathname === "/voices") return refusal(true, fault, refuse) ?? Response.json(voices.list(url.searchParams));
      if (url.pathname.startsWith("/voices/")) {
        const refused = refusal(true, fault, refuse);
        if (refused) return refused;
        const answer = await voices.route(req, url.pathname, fault);
        if (answer) return answer;
      }
      if (req.method === "POST" && url.pathname === "/stt") {
        const form = await req.formData();
        const fields: Record<string, string[]> = {};
        for (const [k, v] of form) if (typeof v === "string") (fields[k] ??= []).push(v);
        const file = form.get("file");
        const received = file instanceof Blob ? receivedFile(await file.bytes()) : undefined;
        transcriptions.push({ fields, file: received?.digest });
        const refused = refusal(true, fault, refuse);
        if (refused) return refused;
        if (!received || !fields.model) return error(400, "invalid_request", "file and model are required");
        if (fault === "malformed") return new Response("{not json", { headers: { "content-type": "application/json" } });
        const heard = received.silent ? [] : STT_WORDS;
        const words = heard.map((word, i) => ({ word, start: i * 0.4, end: i * 0.4 + 0.35 }));
        return Response.json({ type: "transcript", text: heard.join(" "), language: "en", duration: 2.75, words, request_id: crypto.randomUUID() });
      }
      if (req.method !== "POST" || url.pathname !== "/tts/bytes") return error(404, "not_found", `No route for ${req.method} ${url.pathname}`);
      const body = (await req.json().catch(() => ({}))) as Record<string, any>;
      requests.push({ body, authorization, version });
      const refused = refusal(true, fault, refuse);
      if (refused) return refused;
      if (typeof body.transcript !== "string" || !body.transcript) return error(400, "invalid_request", "transcript is required");
      if (!voices.has(voiceId(body.voice) ?? "")) return error(404, "voice_not_found", "Voice not found");
      const out = body.output_format ?? {};
      const rate = Number(out.sample_rate);
      const raw = out.container === "raw" && out.encoding === "pcm_s16le";
      if ((!raw && out.container !== "mp3") || !rate) return error(400, "invalid_output_format", "output_format not supported by this fake");
      const key = `${out.container}\n${rate}\n${body.transcript}`;
      let audio = made.get(key);
      if (!audio) {
        const pcm = speech(body.transcript, rate);
        audio = raw ? pcm : mp3(pcm, rate);
        made.set(key, audio);
      }
      return audioResponse(audio, raw ? "application/octet-stream" : "audio/mpeg", fault === "stall" || fault === "drop" || fault === "malformed" ? fault : undefined);
    },
    websocket: realtimeHandlers,
  });
  return {
    url: `${options.tls ? "https" : "http"}://127.0.0.1:${server.port}`,
    voices: premade,
    requests,
    transcriptions,
    ttsSockets,
    sttSockets,
    clonedVoices: voices.cloned,
    fault: (f) => (pending = f),
    closeIdleStt: (ms) => (sttIdleMs = ms),
    openRequests: () => server.pendingRequests + server.pendingWebSockets,
    openSockets: () => server.pendingWebSockets,
    stop: () => server.stop(true),
  };
}
