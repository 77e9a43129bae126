import { ProviderError, type AudioFormat, type TtsProvider, type TtsStream, type TtsStreamRequest, type Voice } from "../types.ts";
import { upstreamFetch, type HttpProviderOptions } from "../upstream-http.ts";
import { UtteranceTtsStream } from "../utterance-stream.ts";

/** The API version this adapter was written against (the one SDK 4.2 sends). */
export const CARTESIA_API_VERSION = "2026-08-14";
const PCM_RATE = 24000;
const GENERATION_CONFIG = ["speed", "volume"] as const;

/**
 * Cartesia `POST /tts/bytes`, one request per utterance (UtteranceTtsStream), raw 24 kHz
 * pcm_s16le or 44.1 kHz MP3 streamed through. Provider options: `speed`, `volume` (numbers) and
 * `emotion` (into `generation_config`, Sonic 3), `language`.
 */
export class CartesiaTts implements TtsProvider {
  readonly id = "cartesia";

  constructor(private readonly options: HttpProviderOptions) {}

  async open(req: TtsStreamRequest): Promise<TtsStream> {
    if (req.format !== "pcm" && req.format !== "mp3") throw new ProviderError(`cartesia streaming sessions produce pcm or mp3, not ${req.format}`, false);
    if (!req.voice) throw new ProviderError("cartesia needs a voice id", false);
    const mp3 = req.format === "mp3";
    const base: Record<string, unknown> = {
      model_id: req.model,
      voice: { mode: "id", id: req.voice },
      output_format: mp3 ? { container: "mp3", sample_rate: 44100, bit_rate: 128000 } : { container: "raw", encoding: "pcm_s16le", sample_rate: PCM_RATE },
      ...generationOptions(req.options),
    };
    const format: AudioFormat = { encoding: mp3 ? "mp3" : "pcm_s16le", sampleRate: mp3 ? 44100 : PCM_RATE, channels: 1 };
    const url = `${this.options.baseUrl}/tts/bytes`;
    return new UtteranceTtsStream(format, this.id, this.options.idleTimeoutMs, (transcript, signal) =>
      upstreamFetch(this.id, url, { method: "POST", headers: this.headers({ "content-type": "application/json" }), body: JSON.stringify({ ...base, transcript }), signal }, this.options.connectTimeoutMs),
    );
  }

  /** The voices this account can use (`GET /voices`, first page). */
  async voices(): Promise<Voice[]> {
    const res = await upstreamFetch(this.id, `${this.options.baseUrl}/voices?limit=100`, { headers: this.headers({}) }, this.options.connectTimeoutMs);
    const { data } = (await res.json()) as { data: { id: string; name: string; language?: string }[] };
    return data.map((v) => ({ id: v.id, name: v.name, languages: v.language ? [v.language] : [] }));
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return { ...extra, "cartesia-version": CARTESIA_API_VERSION, ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}) };
  }
}

function generationOptions(options: Record<string, string>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const key of GENERATION_CONFIG) {
    if (options[key] === undefined) continue;
    if (!Number.isFinite(Number(options[key]))) throw new ProviderError(`cartesia option ${key} must be a number, not ${JSON.stringify(options[key])}`, false);
    config[key] = Number(options[key]);
  }
  if (options.emotion) config.emotion = options.emotion;
  return { ...(Object.keys(config).length ? { generation_config: config } : {}), ...(options.language ? { language: options.language } : {}) };
}
