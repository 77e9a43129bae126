import { ttsTransport } from "../tts-transport.ts";
import { ProviderError, type AudioFormat, type TtsProvider, type TtsStream, type TtsStreamRequest, type Voice } from "../types.ts";
import { upstreamFetch, type HttpProviderOptions } from "../upstream-http.ts";
import { UtteranceTtsStream } from "../utterance-stream.ts";
import { cartesiaHeaders } from "./api.ts";
import { SONIC_PCM_RATE, SONIC_RAW_PCM, sonicRequest } from "./sonic-request.ts";
import { openSonicWebSocket } from "./websocket-tts.ts";

const MP3 = { container: "mp3", sample_rate: 44100, bit_rate: 128000 };

/**
 * Cartesia Sonic. Sessions stream over `/tts/websocket` (one context per session) by default;
 * `transport=http` selects `POST /tts/bytes`, one request per utterance (UtteranceTtsStream), raw
 * 24 kHz pcm_s16le or 44.1 kHz MP3 streamed through. The WebSocket speaks raw PCM only, so MP3
 * sessions always take the HTTP path. Provider options: see sonic-request.ts and websocket-tts.ts.
 */
export class CartesiaTts implements TtsProvider {
  readonly id = "cartesia";

  constructor(private readonly options: HttpProviderOptions) {}

  async open(req: TtsStreamRequest): Promise<TtsStream> {
    if (req.format !== "pcm" && req.format !== "mp3") throw new ProviderError(`cartesia streaming sessions produce pcm or mp3, not ${req.format}`, false);
    if (ttsTransport(this.id, req.options) === "http" || req.format === "mp3") return this.openHttp(req);
    return openSonicWebSocket(this.id, this.options, req);
  }

  /** The voices this account can use (`GET /voices`, first page). */
  async voices(): Promise<Voice[]> {
    const res = await upstreamFetch(this.id, `${this.options.baseUrl}/voices?limit=100`, { headers: cartesiaHeaders(this.options) }, this.options.connectTimeoutMs);
    const { data } = (await res.json()) as { data: { id: string; name: string; language?: string }[] };
    return data.map((v) => ({ id: v.id, name: v.name, languages: v.language ? [v.language] : [] }));
  }

  private openHttp(req: TtsStreamRequest): TtsStream {
    const mp3 = req.format === "mp3";
    const base = sonicRequest(req, mp3 ? MP3 : SONIC_RAW_PCM);
    const format: AudioFormat = { encoding: mp3 ? "mp3" : "pcm_s16le", sampleRate: mp3 ? 44100 : SONIC_PCM_RATE, channels: 1 };
    const url = `${this.options.baseUrl}/tts/bytes`;
    const headers = cartesiaHeaders(this.options, { "content-type": "application/json" });
    return new UtteranceTtsStream(format, this.id, this.options.idleTimeoutMs, (transcript, signal) =>
      upstreamFetch(this.id, url, { method: "POST", headers, body: JSON.stringify({ ...base, transcript }), signal }, this.options.connectTimeoutMs),
    );
  }
}
