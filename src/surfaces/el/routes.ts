import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { notImplemented } from "../compat-access.ts";
import { mount } from "../mount.ts";
import { elevenLabsCatalogueRoutes } from "./catalogue-routes.ts";
import { elevenLabsConversationRoutes } from "./conversation-route.ts";
import { elAuth } from "./auth.ts";
import { elevenLabsPronunciationRoutes } from "./pronunciation-routes.ts";
import { elevenLabsSpeechEngineRoutes } from "./speech-engine-routes.ts";
import { elevenLabsStreamInputRoute } from "./stream-input-route.ts";
import { elevenLabsSttRoute } from "./stt-route.ts";
import { elevenLabsTtsRoutes } from "./tts-route.ts";
import { elevenLabsUserRoutes } from "./user-routes.ts";
import { elevenLabsVoiceCloningRoutes } from "./voice-cloning-routes.ts";
import { elevenLabsVoicesRoutes } from "./voices-routes.ts";

/**
 * `/el`: the ElevenLabs API for its SDK with the base URL pointed here. Thin translators onto the
 * same sessions, routing and meter as the native API; errors in ElevenLabs' `{detail}` envelope
 * (see error-responses.ts); any other path answers 501 after the key and balance checks.
 */
export function elevenLabsRoutes(ctx: AppContext) {
  return mount(new Elysia({ prefix: "/el" }), ctx, [
    elevenLabsTtsRoutes,
    elevenLabsStreamInputRoute,
    elevenLabsSttRoute,
    elevenLabsCatalogueRoutes,
    elevenLabsSpeechEngineRoutes,
    elevenLabsConversationRoutes,
    elevenLabsVoiceCloningRoutes,
    elevenLabsVoicesRoutes,
    elevenLabsUserRoutes,
    elevenLabsPronunciationRoutes,
  ])
    .use(elAuth(ctx))
    .all("/*", ({ request, principal }) => notImplemented(ctx, principal, new URL(request.url).pathname), { parse: "none" });
}
