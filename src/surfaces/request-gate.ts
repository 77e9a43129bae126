import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import { errorResponse } from "./error-responses.ts";
import { declaredOver, largestBodyLimit, payloadTooLarge } from "./request-body.ts";

/** What still answers while the server drains: balancers and scrapers watch it happen here. */
const DRAINING_PATHS = new Set(["/healthz", "/metrics"]);

/**
 * Checks every request passes before routing, answered in the envelope of the path's surface.
 * While shutting down, new work is 503 `service_unavailable` (to be retried on another instance)
 * and only the operator endpoints answer. A declared body over the largest route limit is 413
 * here: Bun's own cap would answer with no body at all, so it is lifted (server.ts).
 */
export function requestGate(ctx: AppContext): (request: Request) => Response | undefined {
  const maxBody = largestBodyLimit(ctx.config);
  return (request) => {
    const draining = !ctx.accepting();
    const tooLarge = declaredOver(request, maxBody);
    if (!draining && !tooLarge) return undefined;
    const path = new URL(request.url).pathname;
    if (draining && !DRAINING_PATHS.has(path)) return errorResponse(path, new ApiError("service_unavailable", "the server is shutting down: retry on another instance"));
    if (tooLarge) return errorResponse(path, payloadTooLarge(maxBody));
    return undefined;
  };
}
