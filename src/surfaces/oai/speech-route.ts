import { Elysia } from "elysia";
import { authenticate, bearerToken } from "../../accounts/keys.ts";
import { wavHeader } from "../../audio/wav.ts";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { TtsSession } from "../../sessions/tts-session.ts";
import { HttpTtsPort, type AudioStarted, type HttpAudioShape } from "../http-tts-port.ts";
import { openAiError } from "./errors.ts";
import { planOaiSpeech, type ResponseFormat } from "./speech-plan.ts";

const pcmType = (a: AudioStarted) => `audio/L16; rate=${a.sample_rate}; channels=${a.channels}`;
const SHAPES: Record<ResponseFormat, HttpAudioShape> = {
  mp3: { contentType: () => "audio/mpeg" },
  pcm: { contentType: pcmType },
  wav: { contentType: () => "audio/wav", preamble: (a) => wavHeader(a.sample_rate, a.channels) },
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
      const body = await request.json().catch(() => {
        throw new ApiError("invalid_request", "the body is not valid JSON");
      });
      const plan = planOaiSpeech(ctx.catalogue, body);
      const candidates = await ctx.meter.admit(principal, plan.candidates);
      const id = `tts_${crypto.randomUUID()}`;
      const port = new HttpTtsPort(SHAPES[plan.responseFormat], openAiError);
      const session = new TtsSession(
        {
          id,
          voice: plan.voice,
          format: plan.format,
          autoFlush: true,
          options: plan.options,
          admit: async () => {
            const meter = ctx.meter.start(id, principal, "oai");
            meter.prefetch(candidates[0]);
            return { candidates, meter };
          },
        },
        { provider: (pid) => ctx.providers.get(pid), port, log: ctx.log, metrics: ctx.metrics, connectTimeoutMs: ctx.config.providerConnectTimeoutMs, surface: "oai" },
      );
      port.onCancel(() => session.abort());
      ctx.sessions.add(session, "tts");
      session.command({ type: "text", text: plan.input });
      session.command({ type: "close" });
      return port.response;
    },
    { parse: "none", detail: { summary: "OpenAI-compatible text to speech", tags: ["oai"] } },
  );
}
