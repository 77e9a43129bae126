import { ttsTransport } from "../tts-transport.ts";
import { ProviderError } from "../../errors.ts";
import type { AudioFormat, TtsProvider, TtsStream, TtsStreamRequest, Voice } from "../types.ts";
import { upstreamFetch, type HttpProviderOptions } from "../upstream-http.ts";
import { UtteranceTtsStream } from "../utterance-stream.ts";
import { auraPcmRate, auraQuery } from "./aura-query.ts";
import { openAuraWebSocket } from "./aura-websocket.ts";

/**
 * Deepgram Aura. PCM sessions use the streaming WebSocket (`/v1/speak`); `transport=http`, and
 * `format=mp3` (which the WebSocket does not produce), use `POST /v1/speak`, one request per
 * utterance (UtteranceTtsStream). Provider options: `speed`, `transport`.
 */
export class DeepgramTts implements TtsProvider {
  readonly id = "deepgram";

  constructor(private readonly options: HttpProviderOptions) {}

  async open(req: TtsStreamRequest): Promise<TtsStream> {
    if (req.format !== "pcm" && req.format !== "mp3") throw new ProviderError(`deepgram streaming sessions produce pcm or mp3, not ${req.format}`, false);
    const transport = ttsTransport(this.id, req.options);
    const query = auraQuery(req);
    const rate = auraPcmRate(req);
    if (req.format === "pcm" && transport === "websocket") return openAuraWebSocket(this.options, query, rate);
    if (req.format === "pcm") {
      query.set("encoding", "linear16");
      query.set("sample_rate", String(rate));
      query.set("container", "none");
    } else query.set("encoding", "mp3");
    const format: AudioFormat = { encoding: req.format === "mp3" ? "mp3" : "pcm_s16le", sampleRate: rate, channels: 1 };
    const url = `${this.options.baseUrl}/v1/speak?${query}`;
    return new UtteranceTtsStream(format, this.id, this.options.idleTimeoutMs, (text, abort) =>
      upstreamFetch(this.id, url, { method: "POST", headers: this.headers({ "content-type": "application/json" }), body: JSON.stringify({ text }) }, this.options.connectTimeoutMs, abort),
    );
  }

  /** Aura-2 voices from `GET /v1/models`, as the voice part of their model names. */
  async voices(): Promise<Voice[]> {
    const res = await upstreamFetch(this.id, `${this.options.baseUrl}/v1/models`, { headers: this.headers({}) }, this.options.connectTimeoutMs);
    const { tts = [] } = (await res.json()) as { tts?: AuraModel[] };
    return tts.filter((m) => m.architecture === "aura-2" && m.canonical_name.startsWith("aura-2-")).map(voiceOf);
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    return this.options.apiKey ? { ...extra, authorization: `Token ${this.options.apiKey}` } : extra;
  }
}

interface AuraModel {
  canonical_name: string;
  name: string;
  architecture: string;
  languages?: string[];
  metadata?: { accent?: string; age?: string; sample?: string; tags?: string[]; use_cases?: string[] };
}

/** An Aura-2 model as a voice: its metadata's accent, age, sample (the preview) and first use case; `feminine`/`masculine` among its tags is the gender. */
function voiceOf(m: AuraModel): Voice {
  const meta = m.metadata ?? {};
  const gender = meta.tags?.includes("feminine") ? "female" : meta.tags?.includes("masculine") ? "male" : undefined;
  const labels = { ...(meta.age ? { age: meta.age } : {}), ...(meta.use_cases?.[0] ? { use_case: meta.use_cases[0] } : {}) };
  return {
    id: m.canonical_name.slice("aura-2-".length),
    name: m.name,
    languages: m.languages ?? [],
    ...(gender ? { gender } : {}),
    ...(meta.accent ? { accent: meta.accent } : {}),
    ...(meta.sample ? { previewUrl: meta.sample } : {}),
    ...(Object.keys(labels).length ? { labels } : {}),
  };
}
