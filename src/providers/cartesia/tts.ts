import { ttsTransport } from "../tts-transport.ts";
import { ProviderError } from "../../errors.ts";
import type { AudioFormat, TtsProvider, TtsStream, TtsStreamRequest, Voice } from "../types.ts";
import { upstreamFetch, type HttpProviderOptions } from "../upstream-http.ts";
import { UtteranceTtsStream } from "../utterance-stream.ts";
import { cartesiaHeaders } from "./api.ts";
import { CARTESIA_MP3 } from "./catalogue.ts";
import { SONIC_PCM_RATE, SONIC_RAW_PCM, sonicRequest } from "./sonic-request.ts";
import { openSonicWebSocket } from "./websocket-tts.ts";

const MP3 = { container: "mp3", sample_rate: CARTESIA_MP3.sampleRate, bit_rate: CARTESIA_MP3.kbps * 1000 };

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

  /** The voices this account can use (`GET /voices`, page after page up to MAX_VOICE_PAGES). */
  async voices(): Promise<Voice[]> {
    const voices: Voice[] = [];
    let after: string | undefined;
    for (let page = 0; page < MAX_VOICE_PAGES; page++) {
      const query = new URLSearchParams({ limit: "100", ...(after ? { starting_after: after } : {}) });
      const res = await upstreamFetch(this.id, `${this.options.baseUrl}/voices?${query}`, { headers: cartesiaHeaders(this.options) }, this.options.connectTimeoutMs);
      const { data, has_more } = (await res.json()) as { data: CartesiaVoice[]; has_more?: boolean };
      voices.push(...data.map(voiceOf));
      after = data.at(-1)?.id;
      if (!has_more || !after) break;
    }
    return voices;
  }

  private openHttp(req: TtsStreamRequest): TtsStream {
    const mp3 = req.format === "mp3";
    const base = sonicRequest(req, mp3 ? MP3 : SONIC_RAW_PCM);
    const format: AudioFormat = { encoding: mp3 ? "mp3" : "pcm_s16le", sampleRate: mp3 ? CARTESIA_MP3.sampleRate : SONIC_PCM_RATE, channels: 1 };
    const url = `${this.options.baseUrl}/tts/bytes`;
    const headers = cartesiaHeaders(this.options, { "content-type": "application/json" });
    return new UtteranceTtsStream(format, this.id, this.options.idleTimeoutMs, (transcript, abort) =>
      upstreamFetch(this.id, url, { method: "POST", headers, body: JSON.stringify({ ...base, transcript }) }, this.options.connectTimeoutMs, abort),
    );
  }
}

/** Cartesia lists voices 100 at a time; a listing stops after this many pages. */
const MAX_VOICE_PAGES = 20;

interface CartesiaVoice {
  id: string;
  name: string;
  description?: string;
  language?: string;
  locales?: { locale: string }[];
  gender?: "masculine" | "feminine" | "gender_neutral" | null;
  accent?: string | null;
  is_owner?: boolean;
}

const GENDERS = { masculine: "male", feminine: "female", gender_neutral: "neutral" } as const;

/** Cartesia's voice as ours: its own public voices are official, the account's own community. (Its preview files need the account's key: not shown.) */
function voiceOf(v: CartesiaVoice): Voice {
  const locales = (v.locales ?? []).map((l) => l.locale);
  return {
    id: v.id,
    name: v.name,
    languages: locales.length ? locales : v.language ? [v.language] : [],
    ...(v.gender ? { gender: GENDERS[v.gender] } : {}),
    ...(v.accent ? { accent: v.accent } : {}),
    ...(v.description ? { description: v.description } : {}),
    category: v.is_owner ? "community" : "official",
  };
}
