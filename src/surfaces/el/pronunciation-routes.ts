import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import type { Dictionary, DictionaryRow } from "../../pronunciation/dictionaries.ts";
import { plsAnswer } from "../native/pronunciation-routes.ts";
import { dictionaryOfFile, dictionaryOfRules, pageSizeOf, rulesToAdd, stringsToRemove } from "../pronunciation-requests.ts";
import { elAuth } from "./auth.ts";

// ElevenLabs' pronunciation dictionaries (`pronunciationDictionaries.*` in its SDK) onto the
// tenant's own (docs/pronunciation.md): the same paths, bodies and answers; `created_by` is the
// tenant's id and `permission_on_resource` always `admin` (a tenant shares nothing).

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

function metadata(row: DictionaryRow, rulesNum: number) {
  return {
    id: row.id,
    latest_version_id: row.latestVersionId,
    latest_version_rules_num: rulesNum,
    name: row.name,
    permission_on_resource: "admin",
    created_by: row.tenantId,
    creation_time_unix: seconds(row.createdAt),
    archived_time_unix: row.archivedAt ? seconds(row.archivedAt) : null,
    description: row.description,
  };
}

function added(d: Dictionary) {
  return {
    id: d.id,
    name: d.name,
    created_by: d.tenantId,
    creation_time_unix: seconds(d.createdAt),
    version_id: d.latestVersionId,
    version_rules_num: d.rules.length,
    description: d.description,
    permission_on_resource: "admin",
  };
}

const withRules = (d: Dictionary) => ({ ...metadata(d, d.rules.length), rules: d.rules });
const changed = (d: Dictionary) => ({ id: d.id, version_id: d.latestVersionId, version_rules_num: d.rules.length });

export function elevenLabsPronunciationRoutes(ctx: AppContext) {
  const store = ctx.pronunciation;
  const base = "/v1/pronunciation-dictionaries";
  return new Elysia()
    .use(elAuth(ctx))
    .post(`${base}/add-from-rules`, async ({ request, principal }) => added(await store.create(principal.tenantId, await dictionaryOfRules(request))), { parse: "none" })
    .post(`${base}/add-from-file`, async ({ request, principal }) => added(await store.create(principal.tenantId, await dictionaryOfFile(request))), { parse: "none" })
    .get(base, async ({ request, principal }) => {
      const query = new URL(request.url).searchParams;
      const { rows, hasMore } = await store.list(principal.tenantId, pageSizeOf(query), query.get("cursor") || undefined);
      const dictionaries = await Promise.all(rows.map(async (row) => metadata(row, (await store.get(principal.tenantId, row.id)).rules.length)));
      return { pronunciation_dictionaries: dictionaries, next_cursor: hasMore ? rows.at(-1)!.id : null, has_more: hasMore };
    })
    .get(`${base}/:id`, async ({ params, principal }) => withRules(await store.get(principal.tenantId, params.id)))
    .post(`${base}/:id/add-rules`, async ({ request, params, principal }) => changed(await store.addRules(principal.tenantId, params.id, await rulesToAdd(request))), { parse: "none" })
    .post(`${base}/:id/remove-rules`, async ({ request, params, principal }) => changed(await store.removeRules(principal.tenantId, params.id, await stringsToRemove(request))), { parse: "none" })
    .post(`${base}/:id/set-rules`, async ({ request, params, principal }) => changed(await store.setRules(principal.tenantId, params.id, await rulesToAdd(request))), { parse: "none" })
    .get(`${base}/:id/:version_id/download`, async ({ params, principal }) => {
      return plsAnswer(await store.version(principal.tenantId, params.id, params.version_id));
    });
}
