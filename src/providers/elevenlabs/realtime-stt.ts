import type { WireJson } from "../wire-json.ts";
import { base64Of } from "../../audio/bytes.ts";
import { ProviderError } from "../../errors.ts";
import type { SttEvent, SttFamily, SttStream, SttStreamRequest } from "../stt-types.ts";
import { SilenceKeepAlive } from "../silence-keep-alive.ts";
import { type HttpProviderOptions, keepAliveEvery } from "../upstream-http.ts";
import { JsonSocketStream } from "../upstream-ws.ts";

// Scribe realtime (`/v1/speech-to-text/realtime`): audio goes as base64 in JSON
// `input_audio_chunk` messages (the protocol has no binary frames), a chunk with `commit: true`
// commits; Scribe answers partial and committed transcripts, and with `commit_strategy=vad` it
// commits by itself when its VAD hears the end of speech.

export const SCRIBE_REALTIME_FAMILY: SttFamily = {
  name: "elevenlabs-scribe-realtime",
  portableOptions: [
    "language",
    "interim_results",
    "keyterms",
    "include_timestamps",
    "include_language_detection",
    "include_filler_words",
    "silence_duration_ms",
    "speech_threshold",
    "min_speech_duration_ms",
    "min_silence_duration_ms",
  ],
  turnDetector: "acoustic",
  turnStyles: ["acoustic"],
  commitFrame: true,
  interimDefault: true,
  inputFormats: ["pcm_8000", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"],
  // Scribe declares the audio in one `audio_format` value, checked against ours in scribeQuery.
  audioOptions: {},
  passthrough: true,
  optionRanges: { silence_duration_ms: [300, 3000], speech_threshold: [0.1, 0.9], min_speech_duration_ms: [50, 2000], min_silence_duration_ms: [50, 2000] },
};

/** The upstream query: portable settings translated, provider_options winning. */
export function scribeQuery(req: SttStreamRequest): URLSearchParams {
  if (req.channels !== 1) throw new ProviderError("elevenlabs scribe realtime takes mono audio", false);
  const asked = req.options.audio_format;
  if (asked !== undefined && asked !== req.audioFormat) throw new ProviderError(`provider_options[audio_format]=${asked} differs from audio_format=${req.audioFormat}`, false);
  const q = new URLSearchParams({ model_id: req.model, audio_format: req.audioFormat, commit_strategy: req.commitStrategy === "manual" ? "manual" : "vad" });
  if (req.language) q.set("language_code", req.language.split("-")[0]);
  const o = req.portable ?? {};
  if (o.silence_duration_ms !== undefined) q.set("vad_silence_threshold_secs", String(Number(o.silence_duration_ms) / 1000)); // Scribe counts seconds
  if (o.speech_threshold !== undefined) q.set("vad_threshold", String(o.speech_threshold));
  if (o.min_speech_duration_ms !== undefined) q.set("min_speech_duration_ms", String(o.min_speech_duration_ms));
  if (o.min_silence_duration_ms !== undefined) q.set("min_silence_duration_ms", String(o.min_silence_duration_ms));
  if (o.include_timestamps !== undefined) q.set("include_timestamps", String(o.include_timestamps));
  if (o.include_language_detection !== undefined) q.set("include_language_detection", String(o.include_language_detection));
  if (o.include_filler_words !== undefined) q.set("no_verbatim", String(!o.include_filler_words));
  for (const term of o.keyterms ?? []) q.append("keyterms", term);
  for (const [k, v] of Object.entries(req.options)) q.set(k, v);
  return q;
}

/**
 * Metering of a passthrough session's client frames: the audio of each `input_audio_chunk`,
 * counted at the session's declared rate even when a chunk names another `sample_rate`. Every
 * text frame is parsed, so no spelling of the message type escapes it.
 */
export function scribeChunkMeter(declaredRate: number): (frame: string) => number {
  return (frame) => {
    let message: WireJson;
    try {
      message = JSON.parse(frame);
    } catch {
      return 0; // Scribe answers it with an input_error; nothing to meter
    }
    if (message?.message_type !== "input_audio_chunk" || typeof message.audio_base_64 !== "string") return 0;
    const bytes = Buffer.byteLength(message.audio_base_64, "base64");
    const rate = typeof message.sample_rate === "number" && message.sample_rate > 0 ? message.sample_rate : declaredRate;
    return Math.round((bytes * declaredRate) / rate);
  };
}

/** Scribe's error messages: the request's own fault, not worth another provider. */
const CALLER_ERRORS = new Set(["invalid_request", "input_error", "chunk_size_exceeded"]);
const ERRORS = new Set([
  "error",
  "auth_error",
  "quota_exceeded",
  "commit_throttled",
  "transcriber_error",
  "unaccepted_terms",
  "rate_limited",
  "queue_overflow",
  "resource_exhausted",
  "session_time_limit_exceeded",
  "insufficient_audio_activity",
  ...CALLER_ERRORS,
]);

/**
 * With `commit_strategy=vad`, Scribe's own commits and the answers to ours look alike; at the end,
 * after the answer to our last commit by count, one more may still be on its way for this long.
 */
const END_SETTLE_MS = 250;

/** Normalized events from a connected Scribe realtime socket. */
export function scribeStream(ws: WebSocket, req: SttStreamRequest, options: HttpProviderOptions): SttStream {
  const rate = Number(req.audioFormat.split("_")[1]);
  const bytesPerMs = (rate * (req.audioFormat.startsWith("ulaw") ? 1 : 2)) / 1000;
  let sentBytes = 0;
  let turnStartMs = 0;
  let audioSinceCommit = false;
  let ending = false;
  let settle: ReturnType<typeof setTimeout> | undefined;
  /**
   * With `commit_strategy=vad`, a commit of Scribe's own may reach us between a clear and its
   * answer; counted as the answer, it pushes the real answer (cleared audio) past the count. Scribe
   * commits by itself only after `vad_silence_threshold_secs` of silence, so until that much audio
   * has followed the clear, a commit nobody owes is that late answer and is dropped.
   */
  let clearedUntilMs = 0;
  const vadSilenceMs = Number(scribeQuery(req).get("vad_silence_threshold_secs") ?? 1.5) * 1000;
  /** Commits we sent and Scribe has not answered yet, oldest first: what each answer is for. */
  const commits: ("client" | "clear" | "end")[] = [];
  const audioMs = () => Math.round(sentBytes / bytesPerMs);
  const chunk = (audio: Uint8Array) => JSON.stringify({ message_type: "input_audio_chunk", audio_base_64: base64Of(audio), commit: false, sample_rate: rate });
  // Scribe has no keep-alive message. Its answers carry no times of its own, so the silence needs no mapping.
  const quiet = new SilenceKeepAlive(req.audioFormat, audioMs, () => !ending, chunk);

  const stream = new JsonSocketStream<SttEvent>("elevenlabs", ws, options.idleTimeoutMs, {
    keepAlive: quiet.every(keepAliveEvery(options)),
    onJson(ev, s) {
      const type = ev.message_type;
      if (type === "partial_transcript") {
        if (req.interim && ev.text && commits[0] !== "clear") s.push({ type: "transcript", final: false, text: ev.text, startMs: turnStartMs, endMs: audioMs() });
      } else if (type === "committed_transcript") {
        const purpose = commits.shift() ?? (audioMs() < clearedUntilMs ? "late clear" : "provider");
        if (!commits.length) s.answered();
        const endMs = audioMs();
        if (purpose === "clear") s.push({ type: "cleared", atMs: endMs });
        else if (ev.text && purpose !== "late clear") s.push({ type: "transcript", final: true, text: ev.text, startMs: turnStartMs, endMs });
        if (purpose === "client" || purpose === "provider") s.push({ type: "committed", origin: purpose, atMs: endMs });
        turnStartMs = endMs;
        if (ending && !commits.length) {
          if (req.commitStrategy === "manual") s.finish();
          else {
            clearTimeout(settle);
            settle = setTimeout(() => s.finish(), END_SETTLE_MS);
          }
        }
      } else if (ERRORS.has(type)) {
        s.fail(`elevenlabs scribe ${type}: ${ev.error ?? ""}`.trim(), !CALLER_ERRORS.has(type));
      }
    },
  });

  const commit = (purpose: (typeof commits)[number]) => {
    audioSinceCommit = false;
    commits.push(purpose);
    stream.send(JSON.stringify({ message_type: "input_audio_chunk", audio_base_64: "", commit: true, sample_rate: rate }));
    stream.expectAnswer();
  };
  return {
    send(audio) {
      sentBytes += audio.byteLength;
      audioSinceCommit = true;
      stream.send(chunk(audio));
    },
    commit: () => commit("client"),
    clear: () => {
      clearedUntilMs = audioMs() + vadSilenceMs;
      commit("clear");
    },
    // Scribe has no end-of-stream message: the last audio is committed, then the socket closes.
    end() {
      ending = true;
      if (audioSinceCommit) commit("end");
      else if (!commits.length) stream.finish();
    },
    cancel() {
      clearTimeout(settle);
      stream.cancel();
    },
    get bufferedAmount() {
      return stream.bufferedAmount;
    },
    [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator](),
  };
}
