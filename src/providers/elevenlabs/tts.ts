import { ttsTransport } from "../tts-transport.ts";
import { ProviderError } from "../../errors.ts";
import type { AudioFormat, TtsProvider, TtsStream, TtsStreamRequest, Voice } from "../types.ts";
import { upstreamFetch, type HttpProviderOptions } from "../upstream-http.ts";
import { UtteranceTtsStream } from "../utterance-stream.ts";
import { ELEVENLABS_MP3 } from "./catalogue.ts";
import { voiceSettings } from "./options.ts";
import { openStreamInput } from "./stream-input-tts.ts";
import { timestampedAnswers } from "./timestamped-answer.ts";

const PCM_RATE = 24000;

/**
 * ElevenLabs TTS sessions: by default over the input-streaming WebSocket (stream-input-tts.ts);
 * with `transport=http`, `POST /v1/text-to-speech/{voice}/stream`, one request per utterance
 * (UtteranceTtsStream), each told the utterance before it (`previous_text`) so prosody carries
 * across sentences; asked for timings, `…/stream/with-timestamps` instead (timestamped-answer.ts).
 * Provider options: `stability`, `similarity_boost`, `style`, `speed` (into `voice_settings`),
 * `language_code`, and per transport `seed`, `optimize_streaming_latency` (HTTP) or those of
 * stream-input-tts.ts (WebSocket).
 */
export class ElevenLabsTts implements TtsProvider {
  readonly id = "elevenlabs";
  /** Its English v1 and Flash/Turbo v2 models say `<phoneme>` tags (the WebSocket once `enable_ssml_parsing` is on). */
  readonly phonemes = "ssml";

  constructor(private readonly options: HttpProviderOptions) {}

  async open(req: TtsStreamRequest): Promise<TtsStream> {
    if (req.format !== "pcm" && req.format !== "mp3") throw new ProviderError(`elevenlabs streaming sessions produce pcm or mp3, not ${req.format}`, false);
    if (!req.voice) throw new ProviderError("elevenlabs needs a voice id", false);
    const mp3 = req.format === "mp3";
    const format: AudioFormat = { encoding: mp3 ? "mp3" : "pcm_s16le", sampleRate: mp3 ? ELEVENLABS_MP3.sampleRate : PCM_RATE, channels: 1 };
    const outputFormat = mp3 ? `mp3_${ELEVENLABS_MP3.sampleRate}_${ELEVENLABS_MP3.kbps}` : `pcm_${PCM_RATE}`;
    if (ttsTransport(this.id, req.options) === "websocket") return openStreamInput(this.options, req, req.voice, format, outputFormat);
    const query = new URLSearchParams({ output_format: outputFormat });
    if (req.options.optimize_streaming_latency) query.set("optimize_streaming_latency", req.options.optimize_streaming_latency);
    const url = `${this.options.baseUrl}/v1/text-to-speech/${encodeURIComponent(req.voice)}/stream${req.alignment ? "/with-timestamps" : ""}?${query}`;
    const base = requestBody(req);
    // The caller's own previous_text opens the session; each later utterance follows the one before it.
    let previous = req.options.previous_text;
    return new UtteranceTtsStream(
      format,
      this.id,
      this.options.idleTimeoutMs,
      (text, abort) => {
        const body = { ...base, text, ...(previous ? { previous_text: previous } : {}) };
        previous = text;
        return upstreamFetch(this.id, url, { method: "POST", headers: this.headers({ "content-type": "application/json" }), body: JSON.stringify(body) }, this.options.connectTimeoutMs, abort);
      },
      req.alignment ? timestampedAnswers(format) : undefined,
    );
  }

  /** The voices this account can use (`GET /v1/voices`). */
  async voices(): Promise<Voice[]> {
    const res = await upstreamFetch(this.id, `${this.options.baseUrl}/v1/voices`, { headers: this.headers({}) }, this.options.connectTimeoutMs);
    const { voices } = (await res.json()) as { voices: ElevenLabsVoice[] };
    return voices.map(voiceOf);
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return this.options.apiKey ? { ...extra, "xi-api-key": this.options.apiKey } : extra;
  }
}

function requestBody(req: TtsStreamRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model_id: req.model };
  const settings = voiceSettings(req.speed, req.options);
  if (settings) body.voice_settings = settings;
  if (req.options.language_code) body.language_code = req.options.language_code;
  if (req.options.seed) body.seed = Number(req.options.seed);
  return body;
}

interface ElevenLabsVoice {
  voice_id: string;
  name: string;
  category?: string;
  description?: string | null;
  preview_url?: string | null;
  labels?: Record<string, string>;
  verified_languages?: { language: string; locale?: string | null }[];
}

/**
 * ElevenLabs' voice as ours: its `premade` voices are official, the rest (cloned, generated, the
 * library's professional voices) community; `labels` keep what is not said elsewhere (its
 * `description` label, a word such as "warm", becomes `style`).
 */
function voiceOf(v: ElevenLabsVoice): Voice {
  const { gender, accent, language, description: style, ...rest } = v.labels ?? {};
  const verified = (v.verified_languages ?? []).map((l) => l.locale || l.language);
  const labels = { ...rest, ...(style ? { style } : {}) };
  return {
    id: v.voice_id,
    name: v.name,
    languages: [...new Set(verified.length ? verified : language ? [language] : [])],
    ...(gender ? { gender } : {}),
    ...(accent ? { accent } : {}),
    ...(v.description ? { description: v.description } : {}),
    ...(v.preview_url ? { previewUrl: v.preview_url } : {}),
    category: !v.category || v.category === "premade" ? "official" : "community",
    ...(Object.keys(labels).length ? { labels } : {}),
  };
}
