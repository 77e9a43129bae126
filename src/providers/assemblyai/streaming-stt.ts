import type { WireJson } from "../wire-json.ts";
import { CLOSE, ProviderError } from "../../errors.ts";
import type { RawUpstream, SttEvent, SttFamily, SttStream, SttStreamRequest } from "../stt-types.ts";
import { TurnEnds, turnEndingStream } from "../turn-ends.ts";
import { type HttpProviderOptions, keepAliveEvery } from "../upstream-http.ts";
import { JsonSocketStream, openUpstreamSocket, rawUpstream } from "../upstream-ws.ts";
import { AudioMessages } from "./audio-messages.ts";

/**
 * Universal-Streaming v3: AssemblyAI decides turns itself, semantically by default (an
 * end-of-turn model, with a silence fallback after `max_turn_silence`). Acoustic turns on request
 * switch the semantic side off (`end_of_turn_confidence_threshold=1`), leaving the silence rule.
 * `ForceEndpoint` is its commit frame. A recorded file must be streamed to it in real time
 * (AssemblyAI's guide "Stream a pre-recorded file in real time": faster audio degrades the
 * transcript or closes the session).
 */
export const UNIVERSAL_STREAMING_FAMILY: SttFamily = {
  name: "assemblyai-universal-streaming",
  portableOptions: ["language", "interim_results", "include_timestamps", "keyterms", "formatting", "turn_threshold", "silence_duration_ms", "turn_timeout_ms", "speech_threshold", "diarization"],
  turnDetector: "semantic",
  turnStyles: ["semantic", "acoustic"],
  commitFrame: true,
  interimDefault: true,
  inputFormats: ["pcm_8000", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"],
  audioOptions: { encoding: "encoding", sampleRate: "sample_rate", encodingValues: { pcm: "pcm_s16le", ulaw: "pcm_mulaw" } },
  passthrough: true,
  realtimeInput: true,
};

export const isUniversalStreaming = (model: string) => model.startsWith("universal-streaming-");

const ENGLISH = "universal-streaming-english";
const MULTILINGUAL = "universal-streaming-multilingual";

/** Close (and error) codes that are the request's fault: bad sample rate, bad options, chunks out of bounds. */
const CALLERS_FAULT = new Set([4000, 4032, 4033, 4034, 4101]);
const retryable = (code: unknown) => !CALLERS_FAULT.has(Number(code));

/** The streaming WebSocket URL: ASSEMBLYAI_STREAMING_URL, else derived from the REST base. */
export function streamingUrl(baseUrl: string, configured?: string): string {
  if (configured) return configured;
  const url = new URL(baseUrl);
  url.protocol = url.protocol === "http:" ? "ws:" : "wss:";
  url.hostname = url.hostname.replace(/^api\.((?:[a-z]+\.)?assemblyai\.com)$/, "streaming.$1");
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/v3/ws`;
  return url.toString();
}

/** The upstream query: portable settings translated, provider_options winning. */
export function universalStreamingQuery(req: SttStreamRequest): URLSearchParams {
  const language = req.language?.split("-")[0].toLowerCase();
  // The English model hears English only: another language needs the multilingual model (same price).
  const model = req.model === ENGLISH && language && language !== "en" ? MULTILINGUAL : req.model;
  const q = new URLSearchParams({ speech_model: model, encoding: req.audioFormat.startsWith("ulaw") ? "pcm_mulaw" : "pcm_s16le", sample_rate: req.audioFormat.split("_")[1] });
  if (language && model !== ENGLISH) q.set("language_codes", JSON.stringify([language]));
  const o = req.portable ?? {};
  const acoustic = req.turnDetection === "acoustic";
  if (acoustic) q.set("end_of_turn_confidence_threshold", "1");
  const native: [keyof typeof o, string][] = [
    ["formatting", "format_turns"],
    ["turn_threshold", "end_of_turn_confidence_threshold"],
    // Acoustic turns end after max_turn_silence: that is the silence a client sets.
    ["turn_timeout_ms", "max_turn_silence"],
    ["silence_duration_ms", acoustic ? "max_turn_silence" : "min_turn_silence"],
    ["speech_threshold", "vad_threshold"],
    ["diarization", "speaker_labels"],
  ];
  for (const [portable, name] of native) if (o[portable] !== undefined) q.set(name, String(o[portable]));
  if (o.keyterms?.length) q.set("keyterms_prompt", JSON.stringify(o.keyterms));
  for (const [k, v] of Object.entries(req.options)) q.set(k, v);
  return q;
}

function connect(options: AssemblyAiStreamingOptions, query: URLSearchParams): Promise<WebSocket> {
  return openUpstreamSocket("assemblyai", `${options.streamingUrl}?${query}`, { headers: options.apiKey ? { Authorization: options.apiKey } : {} });
}

export interface AssemblyAiStreamingOptions extends HttpProviderOptions {
  streamingUrl: string;
}

const parse = (data: unknown): WireJson | undefined => {
  try {
    const ev = JSON.parse(String(data));
    return ev && typeof ev === "object" ? ev : undefined;
  } catch {
    return undefined;
  }
};
const isError = (ev: WireJson) => ev.type === "Error" || typeof ev.error === "string";
const errorOf = (ev: WireJson) => new ProviderError(`assemblyai reported an error: ${ev.error ?? "unknown"}`, retryable(ev.error_code));

/**
 * The session is accepted once AssemblyAI sends `Begin`: a refusal it signals by closing right
 * after the upgrade (4001 bad key, 4029 rate limit, …) is then a failed connection, and the next
 * candidate can be tried.
 */
function awaitBegin(ws: WebSocket, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (err?: ProviderError) => {
      clearTimeout(timer);
      ws.onmessage = ws.onclose = null;
      if (!err) return resolve();
      if (ws.readyState === WebSocket.OPEN) ws.close(CLOSE.normal);
      reject(err);
    };
    const timer = setTimeout(() => settle(new ProviderError(`assemblyai did not begin the session within ${timeoutMs} ms`, true)), timeoutMs);
    ws.onmessage = (e) => {
      const ev = parse(e.data);
      if (!ev) settle(new ProviderError("assemblyai sent a frame that is not JSON", true));
      else if (isError(ev)) settle(errorOf(ev));
      else if (ev.type === "Begin") settle();
    };
    ws.onclose = (e) => settle(new ProviderError(`assemblyai closed the stream: ${e.code} ${e.reason}`.trim(), retryable(e.code)));
  });
}

export async function universalStreamingPassthrough(options: AssemblyAiStreamingOptions, req: SttStreamRequest): Promise<RawUpstream> {
  return rawUpstream(await connect(options, universalStreamingQuery(req)));
}

interface Word {
  start: number;
  end: number;
}

/** Maps Begin / SpeechStarted / Turn / Termination onto our events; see the table in the docs. */
export async function openUniversalStreaming(options: AssemblyAiStreamingOptions, req: SttStreamRequest): Promise<SttStream> {
  if (req.channels !== 1) throw new ProviderError("assemblyai streams mono audio only (channels=1)", false);
  const query = universalStreamingQuery(req);
  const formatted = query.get("format_turns") === "true";
  const bytesPerMs = (Number(query.get("sample_rate")) * (req.audioFormat.startsWith("ulaw") ? 1 : 2)) / 1000;
  const ws = await connect(options, query);
  await awaitBegin(ws, options.connectTimeoutMs);

  const scope = req.turnDetection === "acoustic" ? "utterance" : "turn";
  let sentBytes = 0;
  let turnOpen = false;
  let ending = false;
  const audioMs = () => Math.round(sentBytes / bytesPerMs);
  const messages = new AudioMessages(req.audioFormat, (audio) => stream.send(audio));
  /** AssemblyAI's time (ms) on the client's clock: the padding of short tails taken out. */
  const clientTime = (ms: unknown) => Math.round(messages.clock.clientTime(Number(ms) || 0));

  const endOfTurn = (ev: WireJson, startMs: number, endMs: number) => {
    turnOpen = false;
    const answering = ends.answering(ending);
    if (ev.transcript && answering !== "clear") stream.push({ type: "transcript", final: true, text: ev.transcript, startMs, endMs });
    if (answering) ends.acknowledge(answering, endMs);
    else {
      stream.push({ type: "signal", origin: "provider", signal: "end", scope, atMs: endMs });
      if (req.commitStrategy === "auto") stream.push({ type: "committed", origin: "provider", atMs: endMs });
    }
    ends.answerRest(endMs);
  };

  const stream: JsonSocketStream<SttEvent> = new JsonSocketStream<SttEvent>("assemblyai", ws, options.idleTimeoutMs, {
    keepAlive: { everyMs: keepAliveEvery(options), frame: '{"type":"KeepAlive"}' },
    onJson(ev, s) {
      if (isError(ev)) return s.fail(errorOf(ev).message, retryable(ev.error_code));
      if (ev.type === "SpeechStarted") {
        turnOpen = true;
        s.push({ type: "signal", origin: "provider", signal: "started", scope, atMs: clientTime(ev.timestamp) });
      } else if (ev.type === "Termination") s.finish();
      else if (ev.type === "Turn") {
        const words: Word[] = Array.isArray(ev.words) ? ev.words : [];
        const startMs = words.length ? clientTime(words[0]!.start) : audioMs();
        const endMs = words.length ? clientTime(words.at(-1)!.end) : startMs;
        if (!ev.end_of_turn) {
          turnOpen = true;
          if (req.interim && ev.transcript && !ends.clearing) s.push({ type: "transcript", final: false, text: ev.transcript, startMs, endMs });
        } else if (!formatted || ev.turn_is_formatted) endOfTurn(ev, startMs, endMs); // with format_turns the formatted copy is the final
      }
    },
  });

  const ends = new TurnEnds(stream, '{"type":"ForceEndpoint"}');
  return turnEndingStream(stream, ends, {
    endFrame: '{"type":"Terminate"}',
    turnOpen: () => turnOpen,
    audioMs,
    send: (audio) => {
      sentBytes += audio.byteLength;
      messages.push(audio);
    },
    flush: () => messages.flush(),
    ending: () => (ending = true),
  });
}
