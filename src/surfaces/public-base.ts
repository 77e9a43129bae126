import type { AppContext } from "../context.ts";

/** Where clients reach this server: `PUBLIC_URL` (behind a proxy or balancer), else the request's own origin. For links and signed URLs. */
export function publicBase(ctx: AppContext, request: Request): string {
  return ctx.config.publicUrl ?? new URL(request.url).origin;
}
