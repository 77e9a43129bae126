import { Elysia } from "elysia";
import type { Principal } from "../../accounts/keys.ts";
import type { AppContext } from "../../context.ts";
import { sessionFailure } from "../../errors.ts";
import { speakOverHttp } from "../http-tts.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";
import { elAuth } from "./auth.ts";
import { elevenLabsError } from "./errors.ts";
import { contentTypeOf, transcoding } from "./output-format.ts";
import { planElevenLabsTts } from "./tts-request.ts";

/**
 * ElevenLabs HTTP TTS onto a TTS session: `/stream` answers as the audio is produced; the plain
 * endpoint answers once it is complete, so that a provider failure mid-way is an error status
 * rather than a truncated file.
 */
export function elevenLabsTtsRoutes(ctx: AppContext) {
  const speak = async (request: Request, principal: Principal, voiceId: string) => {
    const plan = planElevenLabsTts(ctx.catalogue, voiceId, new URL(request.url).searchParams, await jsonBody(request, BODY_LIMITS.speech));
    const shape = { pcm: plan.pcm, contentType: () => contentTypeOf(plan.outputFormat, plan.sampleRate), ...transcoding(plan.transcode) };
    return speakOverHttp(ctx, principal, { ...plan, signal: request.signal }, shape, elevenLabsError, "el");
  };
  return new Elysia()
    .use(elAuth(ctx))
    .post("/v1/text-to-speech/:voice_id/stream", ({ request, principal, params }) => speak(request, principal, params.voice_id), {
      parse: "none",
      detail: { summary: "ElevenLabs-compatible streaming TTS", tags: ["el"] },
    })
    .post(
      "/v1/text-to-speech/:voice_id",
      async ({ request, principal, params }) => {
        const res = await speak(request, principal, params.voice_id);
        if (!res.ok) return res;
        try {
          return new Response(await res.arrayBuffer(), { headers: res.headers });
        } catch (err) {
          return elevenLabsError(sessionFailure(err));
        }
      },
      { parse: "none", detail: { summary: "ElevenLabs-compatible TTS (whole file)", tags: ["el"] } },
    );
}
