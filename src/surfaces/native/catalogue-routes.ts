import { Elysia } from "elysia";
import { modelsView, providersView } from "../../catalogue/views.ts";
import type { AppContext } from "../../context.ts";

/** `GET /v1/providers` and `GET /v1/models`: no key needed. Computed once: the catalogue is fixed at start. */
export function catalogueRoutes(ctx: AppContext) {
  const providers = providersView(ctx.catalogue);
  const models = modelsView(ctx.catalogue);
  return new Elysia().get("/v1/providers", () => providers).get("/v1/models", () => models);
}
