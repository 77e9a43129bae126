import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { absolutePreview, type VoiceEntry } from "../../voices/voice-entry.ts";
import { PREVIEW_PATH } from "../../voices/voice-previews.ts";
import { text } from "../account/query.ts";
import { nativeKey } from "./auth.ts";
import { voiceQuery } from "./voices-query.ts";
import { publicBase } from "../public-base.ts";

// `GET /v1/voices`, the voice catalogue (docs/voices.md): no key needed; with a Bearer key the
// tenant's own voices are searched alongside (`VoiceCatalogue.setOwnVoices`). And
// `GET /v1/voices/preview`, the router's sample of an embedded engine's voice, as MP3.

/** How long a client may keep a preview: a voice's sample does not change while the server runs. */
const PREVIEW_MAX_AGE_S = 86_400;

/** The caller's own voices when it sent a key (which must then be valid: 401 / 403 otherwise); none without one. */
async function ownVoices(ctx: AppContext, request: Request): Promise<readonly VoiceEntry[]> {
  if (!request.headers.has("authorization")) return [];
  const principal = await ctx.keys.authenticate(nativeKey(request));
  return ctx.voices.ownVoicesOf(principal.tenantId);
}

export function voicesRoute(ctx: AppContext) {
  return new Elysia()
    .get("/v1/voices", async ({ request }) => {
      const own = await ownVoices(ctx, request);
      const query = voiceQuery(request, ctx.catalogue);
      await ctx.voices.ready();
      const page = ctx.voices.search(query, { own });
      const base = publicBase(ctx, request);
      return { ...page, voices: page.voices.map((e) => absolutePreview(e, base)) };
    })
    .get(PREVIEW_PATH, async ({ request }) => {
      const params = new URL(request.url).searchParams;
      const [model, voice] = [text(params, "model", 1, 200), text(params, "voice", 1, 200)];
      await ctx.voices.ready();
      const entry = model && voice ? ctx.voices.entry(model, voice) : undefined;
      const audio = entry && ctx.voicePreviews.audio(entry);
      if (!audio) throw new ApiError("not_found", "no preview of this model and voice is made here: the voice's preview_url says where its preview is");
      const mp3 = await audio.catch((err: Error) => {
        throw new ApiError("upstream_error", `the preview could not be made: ${err.message}`);
      });
      return new Response(mp3, { headers: { "content-type": "audio/mpeg", "cache-control": `public, max-age=${PREVIEW_MAX_AGE_S}` } });
    });
}
