import { Elysia } from "elysia";
import type { Principal } from "../../accounts/keys.ts";
import type { AppContext } from "../../context.ts";
import { sessionFailure } from "../../errors.ts";
import { allowStalledReader, type RequestTimeouts } from "../stalled-readers.ts";
import { speakOverHttp } from "../http-tts.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";
import { elAuth } from "./auth.ts";
import { elevenLabsError } from "./errors.ts";
import { contentTypeOf, transcoding } from "./output-format.ts";
import { joinedTimestamps, timestampedShape } from "./timestamped-body.ts";
import { planElevenLabsTts } from "./tts-request.ts";

/** A streamed answer made whole, so that a provider failure mid-way is an error status rather than a truncated answer. */
async function whole(res: Response, join: (res: Response) => Promise<Response>): Promise<Response> {
  if (!res.ok) return res;
  try {
    return await join(res);
  } catch (err) {
    return elevenLabsError(sessionFailure(err));
  }
}

/**
 * ElevenLabs HTTP TTS onto a TTS session: `/stream` answers as the audio is produced; the plain
 * endpoint answers once it is complete. The `with-timestamps` variants carry the audio as base64
 * in JSON beside the characters' timings (timestamped-body.ts).
 */
export function elevenLabsTtsRoutes(ctx: AppContext) {
  const speak = async (request: Request, server: RequestTimeouts | null, principal: Principal, voiceId: string, timestamps = false) => {
    const plan = planElevenLabsTts(ctx.catalogue, voiceId, new URL(request.url).searchParams, await jsonBody(request, BODY_LIMITS.speech), timestamps);
    const audio = { pcm: plan.pcm, ...transcoding(plan.transcode) };
    const shape = timestamps ? timestampedShape(audio) : { ...audio, contentType: () => contentTypeOf(plan.outputFormat, plan.sampleRate) };
    allowStalledReader(ctx, server, request);
    return speakOverHttp(ctx, principal, { ...plan, signal: request.signal }, shape, elevenLabsError, "el");
  };
  const bytes = async (res: Response) => new Response(await res.arrayBuffer(), { headers: res.headers });
  return new Elysia()
    .use(elAuth(ctx))
    .post("/v1/text-to-speech/:voice_id/stream", ({ request, server, principal, params }) => speak(request, server, principal, params.voice_id), {
      parse: "none",
    })
    .post("/v1/text-to-speech/:voice_id", async ({ request, server, principal, params }) => whole(await speak(request, server, principal, params.voice_id), bytes), {
      parse: "none",
    })
    .post("/v1/text-to-speech/:voice_id/stream/with-timestamps", ({ request, server, principal, params }) => speak(request, server, principal, params.voice_id, true), {
      parse: "none",
    })
    .post("/v1/text-to-speech/:voice_id/with-timestamps", async ({ request, server, principal, params }) => whole(await speak(request, server, principal, params.voice_id, true), joinedTimestamps), {
      parse: "none",
    });
}
