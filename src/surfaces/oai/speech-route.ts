import { Elysia } from "elysia";
import { authenticate, bearerToken } from "../../accounts/keys.ts";
import { wavHeader } from "../../audio/wav.ts";
import type { AppContext } from "../../context.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";
import type { AudioStarted, HttpAudioShape } from "../http-tts-port.ts";
import { speakOverHttp } from "../http-tts.ts";
import { openAiError } from "./errors.ts";
import { planOaiSpeech, type ResponseFormat } from "./speech-plan.ts";

const pcmType = (a: AudioStarted) => `audio/L16; rate=${a.sample_rate}; channels=${a.channels}`;
/** OpenAI's `pcm` and `wav` are 24 kHz: other rates are resampled, as SDK callers assume it. */
const OPENAI_PCM_RATE = 24000;
const SHAPES: Record<ResponseFormat, HttpAudioShape> = {
  mp3: { contentType: () => "audio/mpeg" },
  pcm: { pcm: { rate: OPENAI_PCM_RATE }, contentType: pcmType },
  wav: { pcm: { rate: OPENAI_PCM_RATE }, contentType: () => "audio/wav", preamble: (a) => wavHeader(a.sample_rate, a.channels) },
};

/**
 * `POST /oai/audio/speech`: the OpenAI speech request onto a TTS session (the same routing,
 * fallback and metering as `/v1/tts`), the audio streamed back as it is produced.
 */
export function oaiSpeechRoute(ctx: AppContext) {
  return new Elysia().post(
    "/audio/speech",
    async ({ request }) => {
      const principal = await authenticate(ctx.database, bearerToken(request.headers.get("authorization")));
      const plan = planOaiSpeech(ctx.catalogue, await jsonBody(request, BODY_LIMITS.speech));
      return speakOverHttp(ctx, principal, { ...plan, signal: request.signal }, SHAPES[plan.responseFormat], openAiError, "oai");
    },
    { parse: "none", detail: { summary: "OpenAI-compatible text to speech", tags: ["oai"] } },
  );
}
