import type { RawUpstream, SttFamily, SttStream, SttStreamRequest } from "../stt-types.ts";
import type { HttpProviderOptions } from "../upstream-http.ts";
import { openUpstreamSocket, rawUpstream } from "../upstream-ws.ts";
import type { WireJson } from "../wire-json.ts";
import { transcriptionSession } from "./realtime-session-settings.ts";
import { RealtimeTranscription } from "./realtime-transcription.ts";

// OpenAI realtime transcription sessions (GA protocol): `wss://…/v1/realtime?intent=transcription`,
// a `session.update` of type `transcription`, audio as base64 in `input_audio_buffer.append`.

/** OpenAI's realtime transcription family: its server VAD decides turns, semantic VAD on request. */
export const OPENAI_REALTIME_FAMILY: SttFamily = {
  name: "openai-realtime",
  portableOptions: ["language", "keyterms", "context", "silence_duration_ms", "speech_threshold", "interim_results"],
  turnDetector: "acoustic",
  turnStyles: ["acoustic", "semantic"],
  commitFrame: true,
  interimDefault: true,
  // OpenAI takes 24 kHz PCM or 8 kHz G.711 µ-law, nothing else.
  inputFormats: ["pcm_24000", "ulaw_8000"],
  audioOptions: {},
  passthrough: true,
};

/** Bytes per second of an OpenAI input audio format, GA (`{type, rate}`) or beta (`pcm16`, `g711_*`) spelling; undefined if unknown. */
function formatBytesPerSecond(format: unknown): number | undefined {
  if (format === "pcm16") return 48000;
  if (format === "g711_ulaw" || format === "g711_alaw") return 8000;
  if (!format || typeof format !== "object") return undefined;
  const { type, rate } = format as { type?: unknown; rate?: unknown };
  if (type === "audio/pcm") return (typeof rate === "number" ? rate : 24000) * 2;
  if (type === "audio/pcmu" || type === "audio/pcma") return 8000;
  return undefined;
}

/**
 * Metering of a passthrough session's client frames: the audio of each `input_audio_buffer.append`,
 * counted at the rate of the session's declared `audio_format` even when the client's own
 * `session.update` changes the input format (so a switch to 8 kHz µ-law is not billed at 1/6).
 * Every text frame is parsed, so no spelling of the event type escapes it.
 */
export function appendMeter(declaredBytesPerSecond: number): (frame: string) => number {
  let current = declaredBytesPerSecond;
  return (frame) => {
    let ev: WireJson;
    try {
      ev = JSON.parse(frame);
    } catch {
      return 0; // OpenAI answers it with an error event; nothing to meter
    }
    if (ev?.type === "session.update") {
      current = formatBytesPerSecond(ev.session?.audio?.input?.format ?? ev.session?.input_audio_format) ?? current;
      return 0;
    }
    if (ev?.type !== "input_audio_buffer.append" || typeof ev.audio !== "string") return 0;
    return Math.round((Buffer.byteLength(ev.audio, "base64") * declaredBytesPerSecond) / current);
  };
}

/** OpenAI realtime transcription: normalized sessions and passthrough. */
export class OpenAiRealtimeStt {
  constructor(
    private readonly options: HttpProviderOptions,
    private readonly id: string,
  ) {}

  private async socket(req: SttStreamRequest): Promise<WebSocket> {
    const session = transcriptionSession(req); // a bad option fails before connecting
    const url = `${this.options.baseUrl.replace(/^http/, "ws")}/realtime?intent=transcription`;
    const ws = await openUpstreamSocket(this.id, url, { headers: this.options.apiKey ? { Authorization: `Bearer ${this.options.apiKey}` } : {} });
    ws.send(JSON.stringify({ type: "session.update", session }));
    return ws;
  }

  async open(req: SttStreamRequest): Promise<SttStream> {
    const ws = await this.socket(req);
    const session = new RealtimeTranscription(ws, this.options, req);
    session.stream.expectAnswer(); // session.updated is owed
    await session.ready;
    return session;
  }

  /** The client speaks OpenAI's events itself; the session is opened with the settings of the query. */
  async passthrough(req: SttStreamRequest): Promise<RawUpstream> {
    return { ...rawUpstream(await this.socket(req)), audioBytes: appendMeter(req.audioFormat === "ulaw_8000" ? 8000 : 48000) };
  }
}
