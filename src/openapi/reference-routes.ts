import { Elysia } from "elysia";
import type { AppContext } from "../context.ts";
import { asyncApiDocument } from "./asyncapi-document.ts";
import { openApiDocument } from "./document.ts";
import { REFERENCE_ASSETS, REFERENCE_HTML, REFERENCE_PATH } from "./reference-page.ts";
import { publicBase } from "../surfaces/public-base.ts";

/** How long a client may keep the page's files: they change only with the package, between releases. */
const ASSET_MAX_AGE_S = 86_400;

/**
 * `GET /openapi.json` (and `/swagger/json`, its address before), `GET /asyncapi.json`, the
 * reference page at `/docs` (and `/swagger`, which leads there), and the page's files. No key needed.
 */
export function referenceRoutes(ctx: AppContext) {
  const document = openApiDocument({ publicUrl: ctx.config.publicUrl, payments: ctx.payments?.id });
  const app = new Elysia()
    .get("/openapi.json", () => document)
    .get("/swagger/json", () => document)
    // Its server is where the client reached this one (PUBLIC_URL, else the request's own origin).
    .get("/asyncapi.json", ({ request }) => asyncApiDocument(document, publicBase(ctx, request)))
    .get(REFERENCE_PATH, () => new Response(REFERENCE_HTML, { headers: { "content-type": "text/html; charset=utf-8" } }))
    .get("/swagger", ({ redirect }) => redirect(REFERENCE_PATH, 302));
  for (const [path, file] of Object.entries(REFERENCE_ASSETS)) {
    app.get(path, () => new Response(Bun.file(file), { headers: { "cache-control": `public, max-age=${ASSET_MAX_AGE_S}` } }));
  }
  return app;
}
