import { AsyncQueue } from "../../util/async-queue.ts";
import { ProviderError, type RawUpstream, type SttEvent, type SttFamily, type SttProvider, type SttStream, type SttStreamRequest, type Transcription, type TranscriptionRequest } from "../types.ts";
import { upstreamFetch, upstreamJson } from "../upstream-http.ts";

export interface DeepgramOptions {
  apiKey?: string;
  /** REST base, e.g. https://api.deepgram.com; the realtime base is the same host over ws(s). */
  baseUrl: string;
}

/** Nova (v1/listen): acoustic turns from Deepgram's endpointing, Finalize as the commit frame. */
export const NOVA_FAMILY: SttFamily = {
  name: "deepgram-nova",
  portableOptions: ["language", "interim_results", "keyterms", "silence_duration_ms", "diarization", "formatting", "include_filler_words", "include_timestamps"],
  turnDetector: "acoustic",
  turnStyles: ["acoustic"],
  commitFrame: true,
  interimDefault: true,
  inputFormats: ["pcm_8000", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"],
  audioOptions: { encoding: "encoding", sampleRate: "sample_rate", channels: "channels" },
  passthrough: true,
};

/** Deepgram closes a stream that gets nothing for 10 s: a KeepAlive goes out when idle this long. */
const KEEPALIVE_MS = 4000;

/** The upstream query: portable settings translated, provider_options winning. */
export function novaQuery(req: SttStreamRequest): URLSearchParams {
  const q = new URLSearchParams({
    model: req.model,
    encoding: req.audioFormat.startsWith("ulaw") ? "mulaw" : "linear16",
    sample_rate: req.audioFormat.split("_")[1],
    channels: String(req.channels),
    interim_results: String(req.interim),
    vad_events: "true",
  });
  if (req.interim) q.set("utterance_end_ms", "1000");
  if (req.language) q.set("language", req.language);
  const o = req.portable ?? {};
  if (o.silence_duration_ms !== undefined) q.set("endpointing", String(o.silence_duration_ms));
  if (o.formatting !== undefined) q.set("smart_format", String(o.formatting));
  if (o.diarization) q.set("diarize_model", "latest");
  if (o.include_filler_words !== undefined) q.set("filler_words", String(o.include_filler_words));
  for (const term of o.keyterms ?? []) q.append("keyterm", term);
  for (const [k, v] of Object.entries(req.options)) q.set(k, v);
  return q;
}

export class DeepgramStt implements SttProvider {
  readonly id = "deepgram";

  constructor(private readonly options: DeepgramOptions) {}

  family(model: string): SttFamily | undefined {
    return model.startsWith("flux") ? undefined : NOVA_FAMILY; // Flux (v2/listen) is its own family, not built yet
  }

  /** Prerecorded: the file as the body (Deepgram reads the container), utterances as segments. */
  async transcribe(req: TranscriptionRequest): Promise<Transcription> {
    const q = new URLSearchParams({ model: req.model, utterances: "true", smart_format: "true" });
    if (req.language) q.set("language", req.language);
    const res = await upstreamFetch(
      "deepgram",
      `${this.options.baseUrl}/v1/listen?${q}`,
      {
        method: "POST",
        headers: { "content-type": req.mimeType ?? "application/octet-stream", ...(this.options.apiKey ? { authorization: `Token ${this.options.apiKey}` } : {}) },
        body: req.bytes,
      },
      60_000,
    );
    const body = await upstreamJson<{ results?: { channels?: { alternatives?: { transcript?: string }[] }[]; utterances?: { start: number; end: number; transcript: string }[] } }>(this.id, res);
    const text = body.results?.channels?.[0]?.alternatives?.[0]?.transcript;
    if (typeof text !== "string") throw new ProviderError("deepgram answered a transcription without a transcript", true);
    const segments = (body.results?.utterances ?? []).map((u) => ({ text: u.transcript, start_ms: Math.round(u.start * 1000), end_ms: Math.round(u.end * 1000) }));
    return { text, segments };
  }

  private socket(req: SttStreamRequest): Promise<WebSocket> {
    const url = `${this.options.baseUrl.replace(/^http/, "ws")}/v1/listen?${novaQuery(req)}`;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url, { headers: this.options.apiKey ? { Authorization: `Token ${this.options.apiKey}` } : {} } as never);
      ws.binaryType = "arraybuffer";
      ws.onopen = () => resolve(ws);
      ws.onerror = () => reject(new ProviderError("deepgram refused the stream (connection or handshake failed)", true));
    });
  }

  async passthrough(req: SttStreamRequest): Promise<RawUpstream> {
    const ws = await this.socket(req);
    return {
      send: (frame) => ws.send(frame),
      onFrame: (listener) => ws.addEventListener("message", (e) => listener(typeof e.data === "string" ? e.data : new Uint8Array(e.data as ArrayBuffer))),
      onClose: (listener) => ws.addEventListener("close", (e) => listener(e.code, e.reason)),
      close: (code, reason) => ws.close(code, reason),
    };
  }

  async open(req: SttStreamRequest): Promise<SttStream> {
    const ws = await this.socket(req);
    const queue = new AsyncQueue<SttEvent>();
    const auto = req.commitStrategy === "auto";
    let discarding = false; // after a clear, until Deepgram finalizes what was sent
    let lastSend = performance.now();
    const keepAlive = setInterval(() => {
      if (performance.now() - lastSend >= KEEPALIVE_MS && ws.readyState === WebSocket.OPEN) ws.send('{"type":"KeepAlive"}');
    }, 1000);
    const send = (frame: string | Uint8Array) => {
      lastSend = performance.now();
      if (ws.readyState === WebSocket.OPEN) ws.send(frame);
    };

    ws.onmessage = (e) => {
      if (typeof e.data !== "string") return;
      let ev: Record<string, any>;
      try {
        ev = JSON.parse(e.data);
      } catch {
        clearInterval(keepAlive);
        ws.close(1000);
        return queue.fail(new ProviderError("deepgram sent a frame that is not JSON", true));
      }
      if (ev.type === "SpeechStarted") queue.push({ type: "signal", origin: "provider", signal: "started", atMs: Math.round(ev.timestamp * 1000) });
      else if (ev.type === "UtteranceEnd") queue.push({ type: "signal", origin: "provider", signal: "end", atMs: Math.round(ev.last_word_end * 1000) });
      else if (ev.type === "Results") {
        const startMs = Math.round(ev.start * 1000);
        const endMs = Math.round((ev.start + ev.duration) * 1000);
        if (discarding) {
          if (ev.from_finalize) {
            discarding = false;
            queue.push({ type: "cleared", atMs: endMs });
          }
          return;
        }
        const text = ev.channel?.alternatives?.[0]?.transcript ?? "";
        if (text) queue.push({ type: "transcript", final: Boolean(ev.is_final), text, startMs, endMs });
        if (ev.from_finalize) queue.push({ type: "committed", origin: "client", atMs: endMs });
        else if (auto && ev.speech_final) queue.push({ type: "committed", origin: "provider", atMs: endMs });
      }
    };
    ws.onclose = (e) => {
      clearInterval(keepAlive);
      if (e.code === 1000) queue.end();
      else queue.fail(new ProviderError(`deepgram closed the stream: ${e.code} ${e.reason}`.trim(), true));
    };

    return {
      send: (audio) => send(audio),
      commit: () => send('{"type":"Finalize"}'),
      clear: () => {
        discarding = true;
        send('{"type":"Finalize"}');
      },
      end: () => send('{"type":"CloseStream"}'),
      cancel: () => {
        clearInterval(keepAlive);
        ws.close(1000);
        queue.end();
      },
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }
}
