import { ProviderError, type AudioFormat, type TtsProvider, type TtsStream, type TtsStreamRequest, type Voice } from "../types.ts";
import { upstreamFetch, type HttpProviderOptions } from "../upstream-http.ts";
import { UtteranceTtsStream } from "../utterance-stream.ts";

const PCM_RATE = 24000;

/**
 * Deepgram Aura `POST /v1/speak`, one request per utterance (UtteranceTtsStream). The voice is
 * part of Deepgram's model name: model `aura-2` + voice `thalia-en` is `aura-2-thalia-en`.
 * Provider option: `speed`.
 */
export class DeepgramTts implements TtsProvider {
  readonly id = "deepgram";

  constructor(private readonly options: HttpProviderOptions) {}

  async open(req: TtsStreamRequest): Promise<TtsStream> {
    if (req.format !== "pcm" && req.format !== "mp3") throw new ProviderError(`deepgram streaming sessions produce pcm or mp3, not ${req.format}`, false);
    if (!req.voice) throw new ProviderError("deepgram needs a voice (e.g. thalia-en)", false);
    const query = new URLSearchParams({ model: `${req.model}-${req.voice}` });
    if (req.format === "pcm") query.set("encoding", "linear16"), query.set("sample_rate", String(PCM_RATE)), query.set("container", "none");
    else query.set("encoding", "mp3");
    if (req.options.speed) {
      if (!Number.isFinite(Number(req.options.speed))) throw new ProviderError(`deepgram option speed must be a number, not ${JSON.stringify(req.options.speed)}`, false);
      query.set("speed", req.options.speed);
    }
    const format: AudioFormat = { encoding: req.format === "mp3" ? "mp3" : "pcm_s16le", sampleRate: PCM_RATE, channels: 1 };
    const url = `${this.options.baseUrl}/v1/speak?${query}`;
    return new UtteranceTtsStream(format, this.id, this.options.idleTimeoutMs, (text, signal) =>
      upstreamFetch(this.id, url, { method: "POST", headers: this.headers({ "content-type": "application/json" }), body: JSON.stringify({ text }), signal }, this.options.connectTimeoutMs),
    );
  }

  /** Aura-2 voices from `GET /v1/models`, as the voice part of their model names. */
  async voices(): Promise<Voice[]> {
    const res = await upstreamFetch(this.id, `${this.options.baseUrl}/v1/models`, { headers: this.headers({}) }, this.options.connectTimeoutMs);
    const { tts = [] } = (await res.json()) as { tts?: { canonical_name: string; name: string; architecture: string; languages?: string[] }[] };
    return tts
      .filter((m) => m.architecture === "aura-2" && m.canonical_name.startsWith("aura-2-"))
      .map((m) => ({ id: m.canonical_name.slice("aura-2-".length), name: m.name, languages: m.languages ?? [] }));
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return this.options.apiKey ? { ...extra, authorization: `Token ${this.options.apiKey}` } : extra;
  }
}
