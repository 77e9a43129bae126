import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { ERRORS } from "../errors.ts";

/** Operator endpoints: liveness/readiness and Prometheus metrics. */
export function opsRoutes(ctx: AppContext) {
  return new Elysia()
    .get("/healthz", ({ status }) =>
      ctx.accepting() ? { status: "ok", sessions: ctx.sessions.size } : status(ERRORS.service_unavailable.status, { status: "shutting_down", sessions: ctx.sessions.size }),
    )
    .get("/metrics", async ({ set }) => {
      set.headers["content-type"] = ctx.metrics.registry.contentType;
      return ctx.metrics.registry.metrics();
    });
}
