import type { AppContext } from "../context.ts";
import { errorResponse } from "./error-responses.ts";
import { declaredOver, largestBodyLimit, payloadTooLarge } from "./request-body.ts";

/**
 * Checks every request passes before routing, answered in the envelope of the path's surface. A
 * declared body over the largest route limit is 413 here: Bun's own cap would answer with no body
 * at all, so it is lifted (server.ts).
 */
export function requestGate(ctx: AppContext): (request: Request) => Response | undefined {
  const maxBody = largestBodyLimit(ctx.config);
  return (request) => {
    if (!declaredOver(request, maxBody)) return undefined;
    return errorResponse(new URL(request.url).pathname, payloadTooLarge(maxBody));
  };
}
