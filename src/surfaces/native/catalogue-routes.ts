import { Elysia } from "elysia";
import { modelsView, providersView } from "../../catalogue/views.ts";
import type { AppContext } from "../../context.ts";

/**
 * `GET /v1/providers` and `GET /v1/models`: no key needed. Computed once (the catalogue is fixed at
 * start), but for each binding's health, which `/v1/providers` reads at each request.
 */
export function catalogueRoutes(ctx: AppContext) {
  const models = modelsView(ctx.catalogue);
  return new Elysia().get("/v1/providers", () => providersView(ctx.catalogue, (b) => ctx.health.view(b))).get("/v1/models", () => models);
}
