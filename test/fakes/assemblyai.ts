import { assemblyAiStreaming, type AssemblyAiStreamingFault, type StreamingConnection } from "./assemblyai-streaming.ts";
import { refusal, type RefusalStatus } from "./http-fake.ts";
import { LOOPBACK_TLS } from "./loopback-tls.ts";
import type { MidStreamFault } from "./mid-stream-faults.ts";
import { receivedFile, type AudioDigest, type ReceivedFile } from "./received-audio.ts";

// A fake of AssemblyAI's async transcription API on loopback, close enough for the official
// `assemblyai` SDK: `Authorization: <key>` (no scheme); `POST /v2/upload` (bytes in,
// `{upload_url}` out), `POST /v2/transcript` (`{audio_url, speech_model, language_code}` in, a
// queued transcript out), `GET /v2/transcript/{id}` (queued → processing → completed over the
// next polls, with words timed in ms: a fixed sentence, or none for an uploaded WAV of digital
// silence). Each upload records the digest of the bytes it received. Errors are
// `{"error": "..."}`. Universal-Streaming (`/v3/ws`) is on the same server: see
// assemblyai-streaming.ts. With `tls`, the server answers https/wss with a self-signed certificate
// (the SDK's streaming client insists on wss).
//
// Faults for the next request: "401", "429", "500"; "failed" makes the next transcript end with
// status "error"; "never" leaves it processing for ever; the streaming faults apply to the next
// `/v3/ws` connection.

export type AssemblyAiFault = "401" | "429" | "500" | "failed" | "never" | Exclude<AssemblyAiStreamingFault, "401" | "429" | "500">;

export const FAKE_ASSEMBLYAI_KEY = "aai-fake-key";
const WORDS = ["Thank", "you", "very", "much", "for", "your", "help."];

interface Job {
  id: string;
  body: Record<string, unknown>;
  polls: number;
  fate: "complete" | "failed" | "never";
}

export interface FakeAssemblyAi {
  url: string;
  /** The Universal-Streaming URL (`ws(s)://…/v3/ws`). */
  streamingUrl: string;
  /** Each `/v3/ws` connection: query, auth header, client frames. */
  streaming: StreamingConnection[];
  openSockets(): number;
  /** `file`: the digest of the uploaded bytes as they arrived; `url`: the `upload_url` answered for them. */
  uploads: { file: AudioDigest; url: string; authorization: string | null }[];
  jobs: Job[];
  fault(f: AssemblyAiFault): void;
  /** From now on a `/v3/ws` connection plays `fault` once it has had so much audio; undefined: none. */
  midStream(fault: MidStreamFault | undefined): void;
  stop(): void;
}

const error = (status: number, message: string) => Response.json({ error: message }, { status });

const REFUSALS = { 401: "Authentication error, API token missing/invalid", 429: "Too many requests", 500: "Internal server error" } as const;
const refuse = (status: RefusalStatus) => error(status, REFUSALS[status]);

export function startFakeAssemblyAi(options: { tls?: boolean } = {}): FakeAssemblyAi {
  const uploads: FakeAssemblyAi["uploads"] = [];
  const jobs: Job[] = [];
  const files = new Map<string, ReceivedFile>();
  const streaming = assemblyAiStreaming();
  let pending: AssemblyAiFault | undefined;
  let midStream: MidStreamFault | undefined;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: options.tls ? LOOPBACK_TLS : undefined,
    websocket: streaming.websocket,
    async fetch(req, srv) {
      const url = new URL(req.url);
      if (url.pathname === "/v3/ws") {
        const fault = pending === "failed" || pending === "never" ? undefined : pending;
        if (fault) pending = undefined;
        return streaming.handshake(req, url, srv, fault, FAKE_ASSEMBLYAI_KEY, midStream);
      }
      const authorization = req.headers.get("authorization");
      const fault = pending === "401" || pending === "429" || pending === "500" ? pending : undefined;
      if (fault) pending = undefined;
      const refused = refusal(authorization === FAKE_ASSEMBLYAI_KEY, fault, refuse);
      if (refused) return refused;

      if (req.method === "POST" && url.pathname === "/v2/upload") {
        const received = receivedFile(await req.bytes());
        const upload_url = `${url.origin}/files/${crypto.randomUUID()}`;
        uploads.push({ file: received.digest, url: upload_url, authorization });
        if (!received.digest.bytes) return error(400, "Upload is empty");
        files.set(upload_url, received);
        return Response.json({ upload_url });
      }
      if (req.method === "POST" && url.pathname === "/v2/transcript") {
        const body = (await req.json().catch(() => ({}))) as Record<string, unknown>;
        if (typeof body.audio_url !== "string") return error(400, "audio_url is required");
        const fate = pending === "failed" ? "failed" : pending === "never" ? "never" : "complete";
        pending = undefined;
        const job: Job = { id: crypto.randomUUID(), body, polls: 0, fate };
        jobs.push(job);
        return Response.json({ id: job.id, status: "queued", audio_url: body.audio_url, speech_model: body.speech_model ?? null });
      }
      const poll = /^\/v2\/transcript\/([^/]+)$/.exec(url.pathname);
      if (req.method === "GET" && poll) {
        const job = jobs.find((j) => j.id === poll[1]);
        if (!job) return error(404, "Transcript not found");
        job.polls++;
        const base = { id: job.id, audio_url: job.body.audio_url, speech_model: job.body.speech_model ?? null, language_code: job.body.language_code ?? "en_us" };
        if (job.fate === "never" || job.polls < 3) return Response.json({ ...base, status: job.polls < 2 ? "queued" : "processing", text: null, words: null });
        if (job.fate === "failed") return Response.json({ ...base, status: "error", error: "Transcoding failed. File does not appear to contain audio." });
        const heard = files.get(String(job.body.audio_url))?.silent ? [] : WORDS;
        const words = heard.map((text, i) => ({ text, start: i * 400, end: i * 400 + 350, confidence: 0.98, speaker: null }));
        return Response.json({ ...base, status: "completed", text: heard.join(" "), words, audio_duration: 3, confidence: 0.98 });
      }
      return error(404, `No route for ${req.method} ${url.pathname}`);
    },
  });
  const scheme = options.tls ? "s" : "";
  return {
    url: `http${scheme}://127.0.0.1:${server.port}`,
    streamingUrl: `ws${scheme}://127.0.0.1:${server.port}/v3/ws`,
    streaming: streaming.connections,
    openSockets: () => server.pendingWebSockets,
    uploads,
    jobs,
    fault: (f) => (pending = f),
    midStream: (fault) => (midStream = fault),
    stop: () => server.stop(true),
  };
}
