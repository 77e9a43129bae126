import { swagger } from "@elysiajs/swagger";
import { Elysia } from "elysia";
import type { AppContext } from "./context.ts";
import { ApiError, nativeEnvelope } from "./errors.ts";
import { signupRoutes } from "./surfaces/account/signup-routes.ts";
import { topUpRoutes } from "./surfaces/account/top-up-routes.ts";
import { paymentRoutes } from "./surfaces/payments/payment-routes.ts";
import { usageRoutes } from "./surfaces/account/usage-routes.ts";
import { catalogueRoutes } from "./surfaces/native/catalogue-routes.ts";
import { sttRoute } from "./surfaces/native/stt-route.ts";
import { transcriptionRoute } from "./surfaces/native/transcription-route.ts";
import { ttsRoute } from "./surfaces/native/tts-route.ts";
import { opsRoutes } from "./surfaces/ops-routes.ts";

/** The HTTP/WebSocket application, composed from its surfaces. */
export function createApp(ctx: AppContext) {
  return new Elysia({ websocket: { maxPayloadLength: 16 * 1024 * 1024, backpressureLimit: 1024 * 1024, closeOnBackpressureLimit: false } })
    .onError(({ code, error, status, set }) => {
      if (error instanceof ApiError) {
        if (typeof error.extra.retry_after === "number") set.headers["retry-after"] = String(error.extra.retry_after);
        return status(error.status, nativeEnvelope(error));
      }
      if (code === "NOT_FOUND") return status(404, nativeEnvelope(new ApiError("not_found", "no such endpoint")));
      if (code === "VALIDATION" || code === "PARSE") {
        return status(400, nativeEnvelope(new ApiError("invalid_request", "the request is not valid")));
      }
      ctx.log.error({ err: error }, "unhandled error");
      return status(500, nativeEnvelope(new ApiError("internal_error", "internal error")));
    })
    .use(
      swagger({
        path: "/swagger",
        documentation: {
          info: { title: "voxroute", version: "0.1.0", description: "Voice API router. WebSocket channels are described in docs/." },
        },
      }),
    )
    .use(opsRoutes(ctx))
    .use(catalogueRoutes(ctx))
    .use(ttsRoute(ctx))
    .use(sttRoute(ctx))
    .use(transcriptionRoute(ctx))
    .use(usageRoutes(ctx))
    .use(signupRoutes(ctx))
    .use(topUpRoutes(ctx))
    .use(paymentRoutes(ctx));
}
