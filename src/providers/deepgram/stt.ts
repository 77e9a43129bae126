import { ProviderError } from "../../errors.ts";
import type { RawUpstream, SttEvent, SttFamily, SttProvider, SttStream, SttStreamRequest, Transcription, TranscriptionRequest } from "../stt-types.ts";
import { keepAliveEvery, upstreamFetch, upstreamJson, type HttpProviderOptions } from "../upstream-http.ts";
import { JsonSocketStream, openUpstreamSocket, rawUpstream } from "../upstream-ws.ts";
import { FLUX_FAMILY, fluxQuery, fluxStream } from "./flux-stt.ts";

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

const isFlux = (model: string) => model.startsWith("flux-");

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

  constructor(private readonly options: HttpProviderOptions) {}

  family(model: string): SttFamily | undefined {
    return isFlux(model) ? FLUX_FAMILY : NOVA_FAMILY;
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
        signal: req.signal,
      },
      60_000,
    );
    const body = await upstreamJson<{ results?: { channels?: { alternatives?: { transcript?: string }[] }[]; utterances?: { start: number; end: number; transcript: string }[] } }>(this.id, res);
    const text = body.results?.channels?.[0]?.alternatives?.[0]?.transcript;
    if (typeof text !== "string") throw new ProviderError("deepgram answered a transcription without a transcript", true);
    const segments = (body.results?.utterances ?? []).map((u) => ({ text: u.transcript, start_ms: Math.round(u.start * 1000), end_ms: Math.round(u.end * 1000) }));
    return { text, segments };
  }

  /** Nova on v1/listen, Flux on v2/listen. */
  private socket(req: SttStreamRequest): Promise<WebSocket> {
    const path = isFlux(req.model) ? `/v2/listen?${fluxQuery(req)}` : `/v1/listen?${novaQuery(req)}`;
    const url = `${this.options.baseUrl.replace(/^http/, "ws")}${path}`;
    return openUpstreamSocket(this.id, url, { headers: this.options.apiKey ? { Authorization: `Token ${this.options.apiKey}` } : {} });
  }

  async passthrough(req: SttStreamRequest): Promise<RawUpstream> {
    return rawUpstream(await this.socket(req));
  }

  async open(req: SttStreamRequest): Promise<SttStream> {
    if (isFlux(req.model)) return fluxStream(await this.socket(req), req, this.options);
    const auto = req.commitStrategy === "auto";
    let discarding = false; // after a clear, until Deepgram finalizes what was sent
    const stream = new JsonSocketStream<SttEvent>(this.id, await this.socket(req), this.options.idleTimeoutMs, {
      // Deepgram closes a stream that gets nothing for 10 s.
      keepAlive: { everyMs: keepAliveEvery(this.options), frame: '{"type":"KeepAlive"}' },
      // With interim results Deepgram answers every stretch of audio (an empty transcript for silence).
      answersAudio: req.interim ? { bytesPerSecond: Number(req.audioFormat.split("_")[1]) * (req.audioFormat.startsWith("ulaw") ? 1 : 2) * req.channels } : undefined,
      onJson(ev, s) {
        if (ev.type === "SpeechStarted") s.push({ type: "signal", origin: "provider", signal: "started", atMs: Math.round(ev.timestamp * 1000) });
        else if (ev.type === "UtteranceEnd") s.push({ type: "signal", origin: "provider", signal: "end", atMs: Math.round(ev.last_word_end * 1000) });
        else if (ev.type === "Results") {
          const startMs = Math.round(ev.start * 1000);
          const endMs = Math.round((ev.start + ev.duration) * 1000);
          if (ev.from_finalize) s.answered();
          if (discarding) {
            if (ev.from_finalize) {
              discarding = false;
              s.push({ type: "cleared", atMs: endMs });
            }
            return;
          }
          const text = ev.channel?.alternatives?.[0]?.transcript ?? "";
          if (text) s.push({ type: "transcript", final: Boolean(ev.is_final), text, startMs, endMs });
          if (ev.from_finalize) s.push({ type: "committed", origin: "client", atMs: endMs });
          else if (auto && ev.speech_final) s.push({ type: "committed", origin: "provider", atMs: endMs });
        }
      },
    });
    const finalize = () => {
      stream.send('{"type":"Finalize"}');
      stream.expectAnswer();
    };
    return {
      send: (audio) => stream.send(audio),
      commit: finalize,
      clear: () => {
        discarding = true;
        finalize();
      },
      end: () => {
        stream.send('{"type":"CloseStream"}');
        stream.expectAnswer();
      },
      cancel: () => stream.cancel(),
      get bufferedAmount() {
        return stream.bufferedAmount;
      },
      [Symbol.asyncIterator]: () => stream[Symbol.asyncIterator](),
    };
  }
}
