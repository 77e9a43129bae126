import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { notImplemented } from "../compat-access.ts";
import { oaiAuth } from "./auth.ts";
import { oaiModelsRoute } from "./models-route.ts";
import { oaiRealtimeClientSecretsRoute } from "./realtime-client-secrets-route.ts";
import { oaiSpeechRoute } from "./speech-route.ts";
import { oaiTranscriptionRoute } from "./transcription-route.ts";

/**
 * `/oai`: the OpenAI audio API for the OpenAI SDK with its base URL pointed here. Thin
 * translators onto the same sessions, routing and meter as the native API; errors in OpenAI's
 * error object (see `surfaceErrorResponse`); any other path answers 501 after the key and balance checks.
 */
export function oaiRoutes(ctx: AppContext) {
  return new Elysia({ prefix: "/oai" })
    .use(oaiSpeechRoute(ctx))
    .use(oaiTranscriptionRoute(ctx))
    .use(oaiRealtimeClientSecretsRoute(ctx))
    .use(oaiModelsRoute(ctx))
    .use(oaiAuth(ctx))
    .all("/*", ({ request, principal }) => notImplemented(ctx, principal, new URL(request.url).pathname), { parse: "none" });
}
