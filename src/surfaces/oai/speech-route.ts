import { Elysia } from "elysia";
import { AacStreamEncoder } from "../../audio/aac.ts";
import { FlacStreamEncoder } from "../../audio/flac.ts";
import { Mp3StreamEncoder } from "../../audio/mp3.ts";
import { OggOpusStreamEncoder, OPUS_RATE } from "../../audio/ogg-opus.ts";
import { wavHeader } from "../../audio/wav.ts";
import type { AppContext } from "../../context.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";
import type { AudioFormat } from "../../providers/types.ts";
import type { HttpAudioShape } from "../http-tts-port.ts";
import { allowStalledReader } from "../stalled-readers.ts";
import { speakOverHttp } from "../http-tts.ts";
import { oaiAuth } from "./auth.ts";
import { openAiError } from "./errors.ts";
import { OPENAI_RATE, planOaiSpeech, type ResponseFormat } from "./speech-plan.ts";
import { sseShape } from "./speech-sse.ts";

const pcmType = (a: AudioFormat) => `audio/L16; rate=${a.sampleRate}; channels=${a.channels}`;
/** `mp3` encoded here (where a provider's own is not at OpenAI's 24 kHz) is LAME's, mono. */
const OAI_MP3_KBPS = 64;
/** `opus` is Ogg Opus at 48 kHz, encoded from the provider's PCM (no provider streams Opus to a session). */
const OAI_OPUS_KBPS = 64;
/** `aac` is AAC-LC in ADTS, encoded from the provider's PCM like `opus`. */
const OAI_AAC_KBPS = 64;
/** The providers' own MP3, passed through. */
const NATIVE_MP3: HttpAudioShape = { contentType: () => "audio/mpeg" };
/** Each format made from the session's PCM. */
const SHAPES: Record<ResponseFormat, HttpAudioShape> = {
  mp3: { pcm: { rate: OPENAI_RATE }, contentType: () => "audio/mpeg", encoder: (a) => new Mp3StreamEncoder(a.sampleRate, OAI_MP3_KBPS) },
  pcm: { pcm: { rate: OPENAI_RATE }, contentType: pcmType },
  wav: { pcm: { rate: OPENAI_RATE }, contentType: () => "audio/wav", preamble: (a) => wavHeader(a.sampleRate, a.channels) },
  flac: { pcm: { rate: OPENAI_RATE }, contentType: () => "audio/flac", encoder: (a) => new FlacStreamEncoder(a.sampleRate) },
  opus: { pcm: { rate: OPUS_RATE }, contentType: () => "audio/ogg", encoder: () => new OggOpusStreamEncoder(OAI_OPUS_KBPS) },
  aac: { pcm: { rate: OPENAI_RATE }, contentType: () => "audio/aac", encoder: (a) => new AacStreamEncoder(a.sampleRate, OAI_AAC_KBPS) },
};

/**
 * `POST /oai/audio/speech`: the OpenAI speech request onto a TTS session (the same routing,
 * fallback and metering as `/v1/tts`), the audio streamed back as it is produced, raw or as
 * server-sent events (`stream_format: "sse"`).
 */
export function oaiSpeechRoute(ctx: AppContext) {
  return new Elysia().use(oaiAuth(ctx)).post(
    "/audio/speech",
    async ({ request, server, principal }) => {
      const plan = planOaiSpeech(ctx.catalogue, await jsonBody(request, BODY_LIMITS.speech));
      const audio = plan.format === "mp3" ? NATIVE_MP3 : SHAPES[plan.responseFormat];
      const shape = plan.streamFormat === "sse" ? sseShape(audio, [...plan.text].length) : audio;
      allowStalledReader(ctx, server, request);
      return speakOverHttp(ctx, principal, { ...plan, signal: request.signal }, shape, openAiError, "oai");
    },
    { parse: "none" },
  );
}
