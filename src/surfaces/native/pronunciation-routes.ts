import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import type { Dictionary, DictionaryRow } from "../../pronunciation/dictionaries.ts";
import { plsOf } from "../../pronunciation/pls.ts";
import { dictionaryOfFile, dictionaryOfRules, pageSizeOf, rulesToAdd, stringsToRemove } from "../pronunciation-requests.ts";
import { nativeAuth } from "./auth.ts";

// `/v1/pronunciation-dictionaries` (docs/pronunciation.md): the same dictionaries as `/el`'s, in
// the native envelope. A new one comes from JSON rules, or from a PLS file in a multipart form.

function summary(row: DictionaryRow, rulesCount: number) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    version_id: row.latestVersionId,
    rules_count: rulesCount,
    created_at: row.createdAt.toISOString(),
    archived_at: row.archivedAt?.toISOString() ?? null,
  };
}

const whole = (d: Dictionary) => ({ ...summary(d, d.rules.length), rules: d.rules });

export function pronunciationRoutes(ctx: AppContext) {
  const store = ctx.pronunciation;
  const base = "/v1/pronunciation-dictionaries";
  return new Elysia()
    .use(nativeAuth(ctx))
    .post(
      base,
      async ({ request, principal, set }) => {
        const multipart = (request.headers.get("content-type") ?? "").startsWith("multipart/form-data");
        const made = await store.create(principal.tenantId, await (multipart ? dictionaryOfFile(request) : dictionaryOfRules(request)));
        set.status = 201;
        return whole(made);
      },
      { parse: "none" },
    )
    .get(base, async ({ request, principal }) => {
      const query = new URL(request.url).searchParams;
      const { rows, hasMore } = await store.list(principal.tenantId, pageSizeOf(query), query.get("cursor") || undefined);
      const dictionaries = await Promise.all(rows.map(async (row) => summary(row, (await store.get(principal.tenantId, row.id)).rules.length)));
      return { dictionaries, has_more: hasMore, next_cursor: hasMore ? rows.at(-1)!.id : null };
    })
    .get(`${base}/:id`, async ({ params, principal }) => whole(await store.get(principal.tenantId, params.id)))
    .post(`${base}/:id/add-rules`, async ({ request, params, principal }) => whole(await store.addRules(principal.tenantId, params.id, await rulesToAdd(request))), { parse: "none" })
    .post(`${base}/:id/remove-rules`, async ({ request, params, principal }) => whole(await store.removeRules(principal.tenantId, params.id, await stringsToRemove(request))), { parse: "none" })
    .post(`${base}/:id/set-rules`, async ({ request, params, principal }) => whole(await store.setRules(principal.tenantId, params.id, await rulesToAdd(request))), { parse: "none" })
    .get(`${base}/:id/:version_id/download`, async ({ params, principal }) => plsAnswer(await store.version(principal.tenantId, params.id, params.version_id)));
}

/** A dictionary version as a PLS file. */
export function plsAnswer(version: { id: string; versionId: string; rules: Dictionary["rules"] }): Response {
  return new Response(plsOf(version.rules), { headers: { "content-type": "application/pls+xml", "content-disposition": `attachment; filename="${version.id}.pls"` } });
}
