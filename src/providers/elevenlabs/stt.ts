import { ProviderError } from "../../errors.ts";
import { type RawUpstream, type SttProvider, type SttStream, type SttStreamRequest, type Transcription, type TranscriptionRequest, oneFamily } from "../stt-types.ts";
import { setAudioFile, upstreamFetch, upstreamJson, type HttpProviderOptions } from "../upstream-http.ts";
import { openUpstreamSocket, rawUpstream } from "../upstream-ws.ts";
import { sentenceSegments } from "../word-segments.ts";
import { SCRIBE_REALTIME_FAMILY, scribeChunkMeter, scribeQuery, scribeStream } from "./realtime-stt.ts";

interface ScribeWord {
  text: string;
  start: number;
  end: number;
  type: "word" | "spacing" | "audio_event";
}

/** ElevenLabs Scribe: realtime over `/v1/speech-to-text/realtime` (realtime-stt.ts), files over `POST /v1/speech-to-text`. */
export class ElevenLabsStt implements SttProvider {
  readonly id = "elevenlabs";

  constructor(private readonly options: HttpProviderOptions) {}

  readonly family = oneFamily(SCRIBE_REALTIME_FAMILY, (model) => model.endsWith("_realtime"));

  private socket(req: SttStreamRequest): Promise<WebSocket> {
    const url = `${this.options.baseUrl.replace(/^http/, "ws")}/v1/speech-to-text/realtime?${scribeQuery(req)}`;
    return openUpstreamSocket(this.id, url, { headers: this.options.apiKey ? { "xi-api-key": this.options.apiKey } : {} });
  }

  async passthrough(req: SttStreamRequest): Promise<RawUpstream> {
    return { ...rawUpstream(await this.socket(req)), audioBytes: scribeChunkMeter(Number(req.audioFormat.split("_")[1])) };
  }

  async open(req: SttStreamRequest): Promise<SttStream> {
    return scribeStream(await this.socket(req), req, this.options);
  }

  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    const form = new FormData();
    form.set("model_id", req.model);
    setAudioFile(form, req);
    form.set("timestamps_granularity", "word");
    form.set("tag_audio_events", "false");
    if (req.language) form.set("language_code", req.language.slice(0, 2));
    const res = await upstreamFetch(
      this.id,
      `${this.options.baseUrl}/v1/speech-to-text`,
      { method: "POST", headers: this.options.apiKey ? { "xi-api-key": this.options.apiKey } : {}, body: form, signal: req.signal },
      Math.max(this.options.connectTimeoutMs, 60_000),
    );
    const body = await upstreamJson<{ text?: unknown; words?: ScribeWord[] }>(this.id, res);
    if (typeof body.text !== "string") throw new ProviderError("elevenlabs answered a transcription without text", true);
    const words = (body.words ?? []).filter((w) => w.type === "word").map((w) => ({ text: w.text, start_ms: Math.round(w.start * 1000), end_ms: Math.round(w.end * 1000) }));
    return { text: body.text.trim(), segments: sentenceSegments(words) };
  }
}
