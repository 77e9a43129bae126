import { Elysia } from "elysia";
import type { AppContext } from "./context.ts";
import { ApiError, toApiError } from "./errors.ts";
import { enterRequest, requestIdFor } from "./request-context.ts";
import { errorResponse } from "./surfaces/error-responses.ts";
import { markRetryVerdict, statusOf } from "./surfaces/retry-verdict.ts";
import { requestAnswered } from "./request-log.ts";
import { signupRoutes } from "./surfaces/account/signup-routes.ts";
import { topUpRoutes } from "./surfaces/account/top-up-routes.ts";
import { paymentRoutes } from "./surfaces/payments/payment-routes.ts";
import { usageRoutes } from "./surfaces/account/usage-routes.ts";
import { keysRoutes } from "./surfaces/account/keys-routes.ts";
import { limitsRoutes } from "./surfaces/account/limits-routes.ts";
import { catalogueRoutes } from "./surfaces/native/catalogue-routes.ts";
import { customVoiceRoutes } from "./surfaces/native/custom-voices-routes.ts";
import { pronunciationRoutes } from "./surfaces/native/pronunciation-routes.ts";
import { voicesRoute } from "./surfaces/native/voices-route.ts";
import { sttRoute } from "./surfaces/native/stt-route.ts";
import { transcriptionRoute } from "./surfaces/native/transcription-route.ts";
import { ttsRoute } from "./surfaces/native/tts-route.ts";
import { realtimeProfileRoutes } from "./surfaces/native/realtime-profile-routes.ts";
import { realtimeClientSecretRoute } from "./surfaces/native/realtime-client-secret-route.ts";
import { realtimeRoute } from "./surfaces/native/realtime-route.ts";
import { callWebhookRoute } from "./surfaces/telephony/call-webhook-route.ts";
import { telephonyMediaRoutes } from "./surfaces/telephony/media-route.ts";
import { phoneLinkRoutes } from "./surfaces/telephony/phone-link-routes.ts";
import { elevenLabsRoutes } from "./surfaces/el/routes.ts";
import { oaiRoutes } from "./surfaces/oai/routes.ts";
import { opsRoutes } from "./surfaces/ops-routes.ts";
import { referenceRoutes } from "./openapi/reference-routes.ts";
import { mount } from "./surfaces/mount.ts";
import { requestGate } from "./surfaces/request-gate.ts";
import { webPages } from "./surfaces/web-pages.ts";

/**
 * The HTTP/WebSocket application, composed from its surfaces. Every route that takes a body reads
 * it itself (`parse: "none"`) through surfaces/request-body.ts, against its own limit.
 */
export function createApp(ctx: AppContext) {
  const gate = requestGate(ctx);
  const app = new Elysia({
    websocket: { maxPayloadLength: 16 * 1024 * 1024, backpressureLimit: 1024 * 1024, closeOnBackpressureLimit: false },
    // Bun's development mode would rebuild the pages on every request and inject its hot-reload client.
    serve: { routes: webPages, development: false },
  })
    .onRequest(({ request, set }) => {
      const requestId = requestIdFor(request);
      enterRequest(requestId, request);
      set.headers["x-request-id"] = requestId; // on every answer, and on a WebSocket upgrade's 101
      const refused = gate(request);
      if (refused) {
        markRetryVerdict(refused, set); // an answer before routing skips mapResponse
        requestAnswered(ctx, undefined, refused.status);
      }
      return refused;
    })
    .onError(({ code, error, request, set, route }) => {
      let err: ApiError;
      if (error instanceof ApiError) err = error;
      else if (code === "NOT_FOUND") err = new ApiError("not_found", "no such endpoint");
      else if (code === "VALIDATION" || code === "PARSE") err = new ApiError("invalid_request", "the request is not valid");
      else {
        ctx.log.error({ err: error }, "unhandled error");
        err = toApiError(error);
      }
      const response = errorResponse(new URL(request.url).pathname, err);
      markRetryVerdict(response, set); // an unknown path skips mapResponse
      requestAnswered(ctx, code === "NOT_FOUND" ? undefined : route, response.status);
      return response;
    })
    .mapResponse({ as: "global" }, ({ responseValue, set, route }) => {
      markRetryVerdict(responseValue, set);
      requestAnswered(ctx, route, statusOf(responseValue, set.status));
    });
  return mount(app, ctx, [
    referenceRoutes,
    opsRoutes,
    catalogueRoutes,
    voicesRoute,
    ttsRoute,
    sttRoute,
    transcriptionRoute,
    usageRoutes,
    keysRoutes,
    limitsRoutes,
    signupRoutes,
    topUpRoutes,
    paymentRoutes,
    realtimeProfileRoutes,
    realtimeClientSecretRoute,
    realtimeRoute,
    phoneLinkRoutes,
    callWebhookRoute,
    telephonyMediaRoutes,
    customVoiceRoutes,
    pronunciationRoutes,
    oaiRoutes,
    elevenLabsRoutes,
  ]);
}
