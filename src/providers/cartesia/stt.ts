import { ProviderError } from "../../errors.ts";
import { type RawUpstream, type SttProvider, type SttStream, type SttStreamRequest, type Transcription, type TranscriptionRequest, oneFamily } from "../stt-types.ts";
import { setAudioFile, upstreamFetch, upstreamJson, type HttpProviderOptions } from "../upstream-http.ts";
import { openUpstreamSocket, rawUpstream } from "../upstream-ws.ts";
import { sentenceSegments } from "../word-segments.ts";
import { cartesiaHeaders, cartesiaSocketBase } from "./api.ts";
import { INK_WHISPER_FAMILY, InkStream, inkQuery } from "./streaming-stt.ts";

/**
 * Cartesia Ink-Whisper: streaming over the manual-finalize `/stt/websocket` (turns from the router
 * VAD, which the session wraps around the stream), and batch `POST /stt` for files.
 */
export class CartesiaStt implements SttProvider {
  readonly id = "cartesia";

  constructor(private readonly options: HttpProviderOptions) {}

  readonly family = oneFamily(INK_WHISPER_FAMILY, (model) => model.startsWith("ink-whisper"));

  async open(req: SttStreamRequest): Promise<SttStream> {
    return new InkStream(this.id, await this.socket(req), this.options, req);
  }

  async passthrough(req: SttStreamRequest): Promise<RawUpstream> {
    return rawUpstream(await this.socket(req));
  }

  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    const form = new FormData();
    form.set("model", req.model);
    setAudioFile(form, req);
    form.append("timestamp_granularities[]", "word");
    if (req.language) form.set("language", req.language.slice(0, 2));
    const res = await upstreamFetch(
      this.id,
      `${this.options.baseUrl}/stt`,
      { method: "POST", headers: cartesiaHeaders(this.options), body: form, signal: req.signal },
      Math.max(this.options.connectTimeoutMs, 60_000),
    );
    const body = await upstreamJson<{ text?: unknown; words?: { word: string; start: number; end: number }[] }>(this.id, res);
    if (typeof body.text !== "string") throw new ProviderError("cartesia answered a transcription without text", true);
    const words = (body.words ?? []).map((w) => ({ text: w.word, start_ms: Math.round(w.start * 1000), end_ms: Math.round(w.end * 1000) }));
    return { text: body.text.trim(), segments: sentenceSegments(words) };
  }

  private async socket(req: SttStreamRequest): Promise<WebSocket> {
    const query = inkQuery(req); // refuses what cannot be asked before connecting
    return openUpstreamSocket(this.id, `${cartesiaSocketBase(this.options)}/stt/websocket?${query}`, { headers: cartesiaHeaders(this.options) });
  }
}
