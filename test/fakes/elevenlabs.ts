import { startRealtime, type RealtimeConn, type RealtimeFault, type ScribeSocketRecord, type TtsSocketRecord } from "./elevenlabs-realtime.ts";
import { elevenLabsVoices, type ClonedVoiceRecord, type ElevenLabsCloningFault } from "./elevenlabs-voices.ts";
import { Mp3StreamEncoder } from "../../src/audio/mp3.ts";
import { audioResponse, type MidStreamFault, mp3, refusal, speech as speechAt, type RefusalStatus, type StreamFault } from "./http-fake.ts";
import { receivedFile, type AudioDigest } from "./received-audio.ts";
import type { SpeechMaker } from "./speech-thread.ts";

// A fake of ElevenLabs' HTTP text-to-speech and Scribe file transcription on loopback, close enough to the wire that the official
// `@elevenlabs/elevenlabs-js` SDK works against it: `POST /v1/text-to-speech/{voice_id}/stream`
// and its non-streaming sibling, their `/with-timestamps` variants (JSON, or JSON lines when
// streamed: base64 audio with its characters spread evenly over it, in seconds from the start of
// the audio), `GET /v1/voices`, key in `xi-api-key`, `output_format` in the query (pcm_<rate> =
// raw s16le, mp3_<rate>_<kbps>), JSON body with `text`, `model_id`, `voice_settings`. Speech is
// real (our Flite, resampled). `POST /v1/speech-to-text` (multipart `model_id`, `file`) answers a
// fixed sentence with word timings (no words for a WAV of digital silence), and records the digest
// of the file it received. Errors use ElevenLabs' `{"detail":{"status","message"}}` shape.
//
// The realtime WebSockets (TTS stream-input and multi-stream-input, Scribe realtime) live in
// elevenlabs-realtime.ts and are served on the same port.
//
// Faults, set with `fault(...)`, apply to the next request or connection only: "401", "429",
// "500", and the streaming faults "stall", "drop", "malformed" (see http-fake.ts), plus "error"
// for the WebSockets (see elevenlabs-realtime.ts). Instant voice cloning, its voices and its faults
// ("slow", "verifying") are in elevenlabs-voices.ts.

export type ElevenLabsFault = "401" | "429" | "500" | StreamFault | RealtimeFault | ElevenLabsCloningFault;

export interface ElevenLabsRequest {
  voiceId: string;
  path: string;
  query: Record<string, string>;
  body: Record<string, unknown>;
  apiKey: string | null;
}

export interface FakeElevenLabs {
  url: string;
  /** What `GET /v1/voices` lists, in ElevenLabs' shape: change it to change the account's voices. */
  voices: Record<string, unknown>[];
  requests: ElevenLabsRequest[];
  /** `file`: the digest of the uploaded file's bytes as they arrived. */
  transcriptions: { fields: Record<string, string>; file?: AudioDigest; apiKey: string | null }[];
  /** TTS input-streaming sockets and Scribe realtime sockets, in connection order. */
  ttsSockets: TtsSocketRecord[];
  scribeSockets: ScribeSocketRecord[];
  /** Instant clones the fake holds, by voice id: made by `POST /v1/voices/add`, gone after their `DELETE`. */
  clonedVoices: Map<string, ClonedVoiceRecord>;
  fault(f: ElevenLabsFault): void;
  /** TTS over stream-input: a fault once this many audio bytes went out (the socket killed, hung, or closed 1011); undefined: none. */
  midStream(f: MidStreamFault | undefined): void;
  /** From now on a Scribe realtime socket that receives nothing for `ms` is dropped (ElevenLabs' idle limit is not documented); undefined: never. */
  closeIdleScribe(ms: number | undefined): void;
  /** Requests and sockets still open on the fake: a client that forgets to close a connection shows here. */
  openRequests(): number;
  openSockets(): number;
  stop(): void;
}

export const FAKE_ELEVENLABS_KEY = "xi-fake-elevenlabs";
export const FAKE_VOICE = "JBFqnCBsd6RMkjVDRZzb";

const error = (status: number, code: string, message: string) => Response.json({ detail: { status: code, message } }, { status });

const SCRIBE_WORDS = ["Thank", "you", "very", "much.", "For", "your", "help."];
const SCRIBE_ANSWER = {
  language_code: "eng",
  language_probability: 0.99,
  text: SCRIBE_WORDS.join(" "),
  words: SCRIBE_WORDS.flatMap((text, i) => [
    ...(i ? [{ text: " ", start: i * 0.4 - 0.05, end: i * 0.4, type: "spacing", logprob: 0 }] : []),
    { text, start: i * 0.4, end: i * 0.4 + 0.35, type: "word", logprob: -0.1 },
  ]),
};

const REFUSALS = {
  401: ["invalid_api_key", "Invalid API key"],
  429: ["too_many_concurrent_requests", "Too many concurrent requests for your subscription."],
  500: ["internal_server_error", "An internal error occurred."],
} as const;
const refuse = (status: RefusalStatus) => error(status, REFUSALS[status][0], REFUSALS[status][1]);

const SPEECH = /^\/v1\/text-to-speech\/([^/]+)(\/stream)?(\/with-timestamps)?$/;

/** The account's one voice, as ElevenLabs lists its premade George. */
export const GEORGE = {
  voice_id: FAKE_VOICE,
  name: "George",
  category: "premade",
  description: "Warm resonance that instantly captivates listeners.",
  preview_url: `https://storage.googleapis.com/eleven-public-prod/premade/voices/${FAKE_VOICE}/preview.mp3`,
  labels: { gender: "male", accent: "british", age: "middle_aged", description: "warm", use_case: "narration" },
  verified_languages: [{ language: "en", model_id: "eleven_multilingual_v2", accent: "british", locale: "en-GB" }],
};

/**
 * A with-timestamps answer: pieces of 0.2 s of speech (MP3 encoded piece by piece), each with its
 * share of the text's characters spread evenly over it; JSON lines when streamed, else one object.
 */
function timestamped(text: string, codec: string, rate: number, streamed: boolean): Response {
  const pcm = speechAt(text, rate);
  const encoder = codec === "mp3" ? new Mp3StreamEncoder(rate, 128) : undefined;
  const pieceBytes = rate * 0.2 * 2;
  const pieces = Math.max(1, Math.ceil(pcm.length / pieceBytes));
  const chars = [...text];
  const chunks = Array.from({ length: pieces }, (_, i) => {
    const piece = pcm.subarray(i * pieceBytes, (i + 1) * pieceBytes);
    const audio = encoder ? Buffer.concat([encoder.encode(piece), ...(i === pieces - 1 ? [encoder.flush()] : [])]) : Buffer.from(piece);
    const slice = chars.slice(Math.floor((i * chars.length) / pieces), Math.floor(((i + 1) * chars.length) / pieces));
    const [from, share] = [(i * pieceBytes) / 2 / rate, piece.length / 2 / rate / Math.max(1, slice.length)];
    const alignment = { characters: slice, character_start_times_seconds: slice.map((_, k) => from + k * share), character_end_times_seconds: slice.map((_, k) => from + (k + 1) * share) };
    return { audio_base64: audio.toString("base64"), alignment, normalized_alignment: alignment };
  });
  if (streamed) return new Response(chunks.map((c) => `${JSON.stringify(c)}\n`).join(""), { headers: { "content-type": "application/json" } });
  const whole = (pick: (c: (typeof chunks)[number]) => Record<string, unknown[]>) => ({
    characters: chunks.flatMap((c) => pick(c).characters),
    character_start_times_seconds: chunks.flatMap((c) => pick(c).character_start_times_seconds),
    character_end_times_seconds: chunks.flatMap((c) => pick(c).character_end_times_seconds),
  });
  const audio = Buffer.concat(chunks.map((c) => Buffer.from(c.audio_base64, "base64"))).toString("base64");
  return Response.json({ audio_base64: audio, alignment: whole((c) => c.alignment), normalized_alignment: whole((c) => c.normalized_alignment) });
}

/**
 * `speechSpeed`: speech over the input-streaming sockets streams at that many times real time (else
 * as fast as it goes); `speechMaker`: their speech of a new text is made there (speech-thread.ts),
 * not on the fake's event loop.
 */
export function startFakeElevenLabs(options: { speechSpeed?: number; speechMaker?: SpeechMaker } = {}): FakeElevenLabs {
  const requests: ElevenLabsRequest[] = [];
  const transcriptions: FakeElevenLabs["transcriptions"] = [];
  let pending: ElevenLabsFault | undefined;
  const made = new Map<string, Uint8Array>();
  /** Speech of a text being made by `speechMaker`, asked for once however many sockets want it. */
  const making = new Map<string, Promise<Uint8Array>>();
  const premade: Record<string, unknown>[] = [GEORGE];
  /** Real speech for `text` in an output format (`pcm_<rate>`, `mp3_<rate>…`), made once per text and format. */
  const spoken = (text: string, format: string) => {
    const [codec, rate] = format.split("_");
    const key = `${codec}_${rate}\n${text}`;
    let audio = made.get(key);
    if (!audio) {
      const pcm = speechAt(text, Number(rate));
      audio = codec === "pcm" ? pcm : mp3(pcm, Number(rate));
      made.set(key, audio);
    }
    return audio;
  };
  const voices = elevenLabsVoices(premade);
  const realtime = startRealtime(
    (id) => id === FAKE_VOICE || voices.cloned.has(id),
    (text, rate) => {
      const key = `pcm_${rate}\n${text}`;
      const ready = made.get(key);
      if (ready || !options.speechMaker) return ready ?? spoken(text, `pcm_${rate}`);
      let pcm = making.get(key);
      if (!pcm) {
        pcm = options.speechMaker(text, rate).then((audio) => {
          made.set(key, audio);
          return audio;
        });
        making.set(key, pcm);
      }
      return pcm;
    },
    options.speechSpeed,
  );
  const server = Bun.serve<RealtimeConn>({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    websocket: realtime.websocket,
    async fetch(req, srv) {
      const url = new URL(req.url);
      const apiKey = req.headers.get("xi-api-key");
      const fault = pending;
      pending = undefined;
      if (req.headers.get("upgrade")?.toLowerCase() === "websocket") {
        const refused = refusal(apiKey === FAKE_ELEVENLABS_KEY, fault, refuse);
        if (refused) return refused;
        const upgraded = realtime.upgrade(req, srv, fault as RealtimeFault | undefined);
        if (upgraded !== null) return upgraded;
      }
      if (req.method === "GET" && url.pathname === "/v1/voices") {
        return refusal(apiKey === FAKE_ELEVENLABS_KEY, fault, refuse) ?? Response.json(voices.list());
      }
      if (url.pathname.startsWith("/v1/voices/")) {
        const refused = refusal(apiKey === FAKE_ELEVENLABS_KEY, fault, refuse);
        if (refused) return refused;
        const answer = await voices.route(req, url.pathname, fault);
        if (answer) return answer;
      }
      if (req.method === "POST" && url.pathname === "/v1/speech-to-text") {
        const form = await req.formData();
        const fields: Record<string, string> = {};
        for (const [k, v] of form) if (typeof v === "string") fields[k] = v;
        const file = form.get("file");
        const received = file instanceof Blob ? receivedFile(await file.bytes()) : undefined;
        transcriptions.push({ fields, file: received?.digest, apiKey });
        const refused = refusal(apiKey === FAKE_ELEVENLABS_KEY, fault, refuse);
        if (refused) return refused;
        if (!fields.model_id) return error(422, "invalid_request", "model_id is required");
        if (!received) return error(422, "invalid_request", "file or cloud_storage_url is required");
        if (fault === "malformed") return new Response("{not json", { headers: { "content-type": "application/json" } });
        return Response.json(received.silent ? { ...SCRIBE_ANSWER, text: "", words: [] } : SCRIBE_ANSWER);
      }
      const route = req.method === "POST" ? SPEECH.exec(url.pathname) : null;
      if (!route) return error(404, "not_found", `No route for ${req.method} ${url.pathname}`);
      const body = (await req.json().catch(() => ({}))) as Record<string, unknown>;
      requests.push({ voiceId: route[1]!, path: url.pathname, query: Object.fromEntries(url.searchParams), body, apiKey });
      const refused = refusal(apiKey === FAKE_ELEVENLABS_KEY, fault, refuse);
      if (refused) return refused;
      if (route[1] !== FAKE_VOICE && !voices.cloned.has(route[1]!)) return error(404, "voice_not_found", `A voice with voice_id ${route[1]} was not found.`);
      if (typeof body.text !== "string" || !body.text) return error(422, "invalid_request", "text is required");

      const format = url.searchParams.get("output_format") ?? "mp3_44100_128";
      const [codec, rate] = format.split("_");
      if ((codec !== "pcm" && codec !== "mp3") || !Number(rate)) return error(422, "invalid_output_format", `output_format ${format} is not supported by this fake`);
      if (route[3]) return timestamped(body.text, codec!, Number(rate), Boolean(route[2]));
      const audio = spoken(body.text, format);
      const type = codec === "pcm" ? "application/octet-stream" : "audio/mpeg";
      return audioResponse(audio, type, fault === "stall" || fault === "drop" || fault === "malformed" ? fault : undefined);
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    voices: premade,
    requests,
    transcriptions,
    ttsSockets: realtime.ttsSockets,
    scribeSockets: realtime.scribeSockets,
    clonedVoices: voices.cloned,
    fault: (f) => (pending = f),
    midStream: realtime.midStream,
    closeIdleScribe: realtime.closeIdleScribe,
    openRequests: () => server.pendingRequests + server.pendingWebSockets,
    openSockets: () => server.pendingWebSockets,
    stop: () => server.stop(true),
  };
}
