import type { ServerWebSocket } from "bun";
import { auraQueryProblem, auraSocket } from "./deepgram-aura-ws.ts";
import { fluxQueryProblem, fluxSocket } from "./deepgram-flux.ts";
import { type FaultControl, serveWithFaults } from "./fault-modes.ts";
import { closeWhenIdle } from "./idle-close.ts";
import { audioResponse, mp3, refusal, speech, type RefusalStatus } from "./http-fake.ts";
import { ReceivedAudio, receivedFile, type AudioDigest } from "./received-audio.ts";
import { declaredRate, type MidStreamFault, withMidStreamFault } from "./mid-stream-faults.ts";
import { type ReadPace, slowReading } from "./slow-reading.ts";

// A fake of Deepgram on loopback, close enough for the official SDK (`Authorization: Token <key>`
// everywhere):
// - Nova streaming STT (`/v1/listen`): binary audio in; `Results` (interim every 0.5 s of audio,
//   final on `Finalize` with `from_finalize`, and at `CloseStream`), `SpeechStarted` and
//   `UtteranceEnd` when `vad_events=true`, `Metadata` at the end, close 1000. Transcripts are the
//   words of a fixed sentence, one more word per interim, for audio with sound in it: digital
//   silence is heard as nothing (`SpeechStarted` at the first sound, empty transcripts without it).
// - Flux streaming STT (`/v2/listen`, deepgram-flux.ts): turns found in the audio itself.
// - Aura streaming TTS (`/v1/speak` WebSocket, deepgram-aura-ws.ts).
// - Prerecorded `POST /v1/listen`: the fixed sentence's words, none for a WAV of digital silence;
//   each request records the digest of the body it received.
// - `GET /v1/models`, and Aura `POST /v1/speak` (JSON `{text}` in;
//   `linear16` raw PCM at `sample_rate` or `mp3` out; real Flite speech).
//
// Nova connections read their socket as fast as frames come, or, after `readSlowly(rate)`, no
// faster than that (slow-reading.ts: the router meets TCP backpressure).
//
// Faults for the next connection: "401" / "429" / "500" (the handshake answers that status),
// "stall" (the socket opens, then nothing is sent and nothing closes), "drop" (close 1011
// NET-0000 after 1 s of audio in, or after the first audio frame out), "malformed" (a non-JSON
// text frame after the first audio; Aura: instead of `Metadata`), "data-error" (close 1008
// DATA-0000 after the first audio or text), "error-frame" (Flux: a fatal `Error` frame, then
// close 1011), "deaf" (Nova: the socket opens and is never read, so what the router sends waits in
// its buffers). For `POST /v1/speak`, "drop", "malformed" and "stall" are the HTTP streaming faults
// of http-fake.ts. Faults kept until healed: `faults.set(...)` (fault-modes.ts). Mid-stream faults
// (`midStream`, mid-stream-faults.ts) for listen sockets (Nova and Flux) opened from then on:
// `kill`, `hang`, and `error` (Flux: an `Error` frame; Nova has no error event: close 1011 alone).

export type DeepgramFault = "401" | "429" | "500" | "drop" | "malformed" | "data-error" | "error-frame" | "stall" | "deaf";

/** One upgraded socket: each protocol brings its own handler. */
export interface FakeSocket {
  open?(ws: FakeWs): void;
  message(ws: FakeWs, frame: string | Buffer): void;
}
export type FakeWs = ServerWebSocket<FakeSocket>;

/** What a streaming connection received. */
export interface SocketRecord {
  query: URLSearchParams;
  texts: string[];
  audioBytes: number;
  /** The audio's digest, in arrival order. */
  received: ReceivedAudio;
  authorization: string | null;
}

export const FAKE_DEEPGRAM_KEY = "dg-fake-key";
const WORDS = "thank you very much for your help".split(" ");

export interface FakeDeepgram {
  /** REST base (`http://…`) and realtime base (`ws://…`). */
  http: string;
  ws: string;
  /** Each Nova connection (`/v1/listen`): its query, the text frames and audio it sent. */
  connections: SocketRecord[];
  /** Each Flux connection (`/v2/listen`). */
  flux: SocketRecord[];
  /** Each Aura WebSocket (`/v1/speak`). */
  speakSockets: SocketRecord[];
  /** Prerecorded requests (POST /v1/listen): query, content type and the digest of the body as it arrived. */
  prerecorded: { query: URLSearchParams; contentType: string | null; file: AudioDigest }[];
  /** Aura requests (POST /v1/speak): query, JSON body and auth header. */
  speak: { query: Record<string, string>; body: Record<string, unknown>; authorization: string | null }[];
  /** HTTP requests and sockets still open: a client that forgets to cancel a response or close a socket shows here. */
  openRequests(): number;
  fault(f: DeepgramFault): void;
  /** Faults kept until healed (fault-modes.ts): refuse, hang, status500. */
  faults: FaultControl;
  /** Nova connections opened from now on read no more than `bytesPerSecond` (undefined: as fast as frames come). */
  readSlowly(bytesPerSecond: number | undefined): void;
  /** From now on a listen socket (Nova or Flux) that receives nothing for `ms` is closed 1011 NET-0001, as Deepgram does after 10 s; undefined: never. */
  closeIdleStreams(ms: number | undefined): void;
  /** From now on a listen socket (Nova or Flux) plays `fault` once it has had so much audio; undefined: none. */
  midStream(fault: MidStreamFault | undefined): void;
  openSockets(): number;
  stop(): void;
}

interface Conn extends SocketRecord {
  fault?: DeepgramFault;
  readPace?: ReadPace;
  bytesPerSecond: number;
  sentInterimAt: number;
  /** Some audio came; sound came (SpeechStarted was due); sound came since the last Finalize. */
  heard: boolean;
  spoke: boolean;
  soundSinceFinalize: boolean;
  finalizedUpTo: number;
}

export function startFakeDeepgram(): FakeDeepgram {
  const connections: SocketRecord[] = [];
  const flux: SocketRecord[] = [];
  const speakSockets: SocketRecord[] = [];
  const prerecorded: FakeDeepgram["prerecorded"] = [];
  const speak: FakeDeepgram["speak"] = [];
  const spoken = new Map<string, Uint8Array>();
  const dgError = (status: number, err_code: string, err_msg: string) => Response.json({ err_code, err_msg }, { status });
  const REFUSALS = { 401: ["INVALID_AUTH", "Invalid credentials."], 429: ["TOO_MANY_REQUESTS", "Too many requests."], 500: ["INTERNAL", "Internal error."] } as const;
  const refuse = (status: RefusalStatus) => dgError(status, REFUSALS[status][0], REFUSALS[status][1]);

  const synthesize = (text: string, rate: number, encoding = "linear16") => {
    const key = `${encoding}\n${rate}\n${text}`;
    let audio = spoken.get(key);
    if (!audio) {
      const pcm = speech(text, rate);
      audio = encoding === "mp3" ? mp3(pcm, rate) : pcm;
      spoken.set(key, audio);
    }
    return audio;
  };

  const aura = async (req: Request, url: URL, fault: DeepgramFault | undefined) => {
    const authorization = req.headers.get("authorization");
    const body = (await req.json().catch(() => ({}))) as Record<string, unknown>;
    speak.push({ query: Object.fromEntries(url.searchParams), body, authorization });
    const refused = refusal(authorization === `Token ${FAKE_DEEPGRAM_KEY}`, fault, refuse);
    if (refused) return refused;
    if (!url.searchParams.get("model")?.startsWith("aura-")) return dgError(400, "Bad Request", "No such model.");
    if (typeof body.text !== "string" || !body.text) return dgError(400, "Bad Request", "text is required.");
    const encoding = url.searchParams.get("encoding") ?? "mp3";
    if (encoding !== "linear16" && encoding !== "mp3") return dgError(400, "UNSUPPORTED", `encoding ${encoding} is not supported by this fake`);
    const audio = synthesize(body.text, Number(url.searchParams.get("sample_rate") ?? 24000), encoding);
    return audioResponse(audio, encoding === "mp3" ? "audio/mpeg" : "application/octet-stream", fault === "stall" || fault === "drop" || fault === "malformed" ? fault : undefined);
  };
  let pending: DeepgramFault | undefined;
  let readRate: number | undefined;
  let idleCloseMs: number | undefined;
  let midStream: MidStreamFault | undefined;
  const fluxError = (ws: FakeWs) => ws.send(JSON.stringify({ type: "Error", code: "INTERNAL_SERVER_ERROR", description: "The server encountered an internal error." }));
  /** A listen socket under Deepgram's rule for idle streams, when one is set. */
  const idleClosing = (socket: FakeSocket): FakeSocket => {
    const ms = idleCloseMs;
    if (ms === undefined) return socket;
    let idle: { heard(): void } | undefined;
    return {
      open(ws) {
        idle = closeWhenIdle(ws, ms, () => ws.close(1011, "NET-0001"));
        socket.open?.(ws);
      },
      message(ws, frame) {
        idle?.heard();
        socket.message(ws, frame);
      },
    };
  };

  const results = (c: Conn, isFinal: boolean, fromFinalize = false) => {
    const seconds = c.audioBytes / c.bytesPerSecond;
    const words = c.soundSinceFinalize ? WORDS.slice(0, Math.max(1, Math.min(WORDS.length, Math.ceil(seconds * 2)))) : [];
    return JSON.stringify({
      type: "Results",
      channel_index: [0, 1],
      duration: seconds - c.finalizedUpTo,
      start: c.finalizedUpTo,
      is_final: isFinal,
      speech_final: isFinal,
      ...(fromFinalize ? { from_finalize: true } : {}),
      channel: { alternatives: [{ transcript: words.join(" "), confidence: 0.98, words: words.map((w, i) => ({ word: w, start: i * 0.3, end: i * 0.3 + 0.25, confidence: 0.98 })) }] },
      metadata: { request_id: "fake-request", model_uuid: "fake-model", model_info: { name: c.query.get("model"), version: "fake", arch: "nova" } },
    });
  };

  /** Upgrades a streaming connection once its key, fault and query pass. */
  const upgrade = (
    req: Request,
    srv: Bun.Server<FakeSocket>,
    url: URL,
    records: SocketRecord[],
    problem: (q: URLSearchParams) => string | undefined,
    handler: (record: SocketRecord, fault?: DeepgramFault) => FakeSocket,
  ) => {
    const fault = pending;
    pending = undefined;
    const authorization = req.headers.get("authorization");
    const refused = refusal(authorization === `Token ${FAKE_DEEPGRAM_KEY}`, fault, refuse);
    if (refused) return refused;
    const why = problem(url.searchParams);
    if (why) return dgError(400, "Bad Request", why);
    const record: SocketRecord = {
      query: url.searchParams,
      texts: [],
      audioBytes: 0,
      received: new ReceivedAudio(url.searchParams.get("encoding") === "mulaw" ? "mulaw" : "pcm_s16le"),
      authorization,
    };
    records.push(record);
    return srv.upgrade(req, { data: handler(record, fault) }) ? undefined : new Response("upgrade failed", { status: 400 });
  };

  const served = serveWithFaults(() => refuse(500), {
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req, srv) {
      const url = new URL(req.url);
      if (req.method === "GET" && url.pathname === "/v1/models") {
        return Response.json({
          stt: [{ name: "nova-3", canonical_name: "nova-3", architecture: "nova-3", languages: ["en"] }],
          tts: [
            {
              name: "thalia",
              canonical_name: "aura-2-thalia-en",
              architecture: "aura-2",
              languages: ["en", "en-US"],
              metadata: {
                accent: "American",
                age: "Adult",
                sample: "https://static.deepgram.com/examples/Aura-2-thalia.wav",
                tags: ["feminine", "clear", "confident"],
                use_cases: ["casual chat", "customer service"],
              },
            },
            { name: "asteria", canonical_name: "aura-asteria-en", architecture: "aura", languages: ["en"] },
          ],
        });
      }
      const websocket = req.headers.get("upgrade")?.toLowerCase() === "websocket";
      if (websocket && url.pathname === "/v2/listen")
        return upgrade(req, srv, url, flux, fluxQueryProblem, (record, fault) =>
          idleClosing(withMidStreamFault(fluxSocket(url.searchParams, record, fault), midStream, declaredRate(url.searchParams), fluxError)),
        );
      if (websocket && url.pathname === "/v1/speak") return upgrade(req, srv, url, speakSockets, auraQueryProblem, (record, fault) => auraSocket(url.searchParams, record, fault, synthesize));
      if (req.method === "POST" && url.pathname === "/v1/speak") {
        const fault = pending;
        pending = undefined;
        return aura(req, url, fault);
      }
      if (url.pathname !== "/v1/listen") return new Response("not found", { status: 404 });
      if (req.method === "POST") {
        if (req.headers.get("authorization") !== `Token ${FAKE_DEEPGRAM_KEY}`) return refuse(401);
        const received = receivedFile(await req.bytes());
        prerecorded.push({ query: url.searchParams, contentType: req.headers.get("content-type"), file: received.digest });
        const heard = received.silent ? [] : WORDS;
        const text = heard.join(" ");
        return Response.json({
          metadata: { request_id: "fake-request", sha256: "0", created: new Date().toISOString(), duration: 2.745, channels: 1, models: ["fake"] },
          results: {
            channels: [{ alternatives: [{ transcript: text, confidence: 0.98, words: heard.map((w, i) => ({ word: w, start: i * 0.35, end: i * 0.35 + 0.3, confidence: 0.98 })) }] }],
            utterances: text ? [{ start: 0, end: 2.7, transcript: text, confidence: 0.98, channel: 0, words: [] }] : [],
          },
        });
      }
      return upgrade(
        req,
        srv,
        url,
        connections,
        () => undefined,
        (record, fault) => idleClosing(withMidStreamFault(novaSocket(Object.assign(record, novaState(url.searchParams, fault))), midStream, declaredRate(url.searchParams))),
      );
    },
    websocket: {
      open: (ws: FakeWs) => ws.data.open?.(ws),
      message: (ws: FakeWs, frame: string | Buffer) => ws.data.message(ws, frame),
    },
  });

  const novaState = (query: URLSearchParams, fault: DeepgramFault | undefined) => {
    const perSample = query.get("encoding") === "mulaw" ? 1 : 2;
    return {
      fault,
      readPace: readRate ? slowReading(readRate) : undefined,
      bytesPerSecond: Number(query.get("sample_rate") ?? 16000) * perSample * Number(query.get("channels") ?? 1),
      sentInterimAt: 0,
      heard: false,
      spoke: false,
      soundSinceFinalize: false,
      finalizedUpTo: 0,
    };
  };

  const novaSocket = (c: Conn): FakeSocket => ({
    open(ws) {
      if (c.fault === "deaf") ws.pause();
    },
    message(ws, frame) {
      if (typeof frame === "string") {
        c.texts.push(frame);
        const type = (JSON.parse(frame) as { type?: string }).type;
        if (type === "Finalize") {
          ws.send(results(c, true, true));
          c.finalizedUpTo = c.audioBytes / c.bytesPerSecond;
          c.soundSinceFinalize = false;
        } else if (type === "CloseStream") {
          ws.send(results(c, true));
          if (c.query.get("vad_events") === "true") ws.send(JSON.stringify({ type: "UtteranceEnd", channel: [0, 1], last_word_end: c.audioBytes / c.bytesPerSecond }));
          ws.send(
            JSON.stringify({
              type: "Metadata",
              transaction_key: "deprecated",
              request_id: "fake-request",
              sha256: "0",
              created: new Date().toISOString(),
              duration: c.audioBytes / c.bytesPerSecond,
              channels: 1,
            }),
          );
          ws.close(1000, "");
        }
        return;
      }
      c.readPace?.(ws, frame.byteLength);
      c.audioBytes += frame.byteLength;
      const sound = c.received.add(frame);
      c.soundSinceFinalize ||= sound;
      if (sound && !c.spoke) {
        c.spoke = true;
        if (c.query.get("vad_events") === "true") ws.send(JSON.stringify({ type: "SpeechStarted", channel: [0, 1], timestamp: 0.1 }));
      }
      if (!c.heard) {
        c.heard = true;
        if (c.fault === "malformed") ws.send("this is not json");
        if (c.fault === "data-error") return ws.close(1008, "DATA-0000");
      }
      if (c.fault === "drop" && c.audioBytes >= c.bytesPerSecond) return ws.close(1011, "NET-0000");
      if (c.query.get("interim_results") === "true" && c.audioBytes - c.sentInterimAt >= c.bytesPerSecond / 2) {
        c.sentInterimAt = c.audioBytes;
        ws.send(results(c, false));
      }
    },
  });

  return {
    http: `http://127.0.0.1:${served.server().port}`,
    ws: `ws://127.0.0.1:${served.server().port}`,
    connections,
    flux,
    speakSockets,
    prerecorded,
    speak,
    openRequests: () => served.server().pendingRequests + served.server().pendingWebSockets,
    fault: (f) => (pending = f),
    faults: served.faults,
    readSlowly: (bytesPerSecond) => (readRate = bytesPerSecond),
    closeIdleStreams: (ms) => (idleCloseMs = ms),
    midStream: (fault) => (midStream = fault),
    openSockets: () => served.server().pendingWebSockets,
    stop: served.stop,
  };
}
