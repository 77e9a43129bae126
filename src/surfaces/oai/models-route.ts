import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { oaiAuth } from "./auth.ts";

// `GET /oai/models` and `GET /oai/models/{id}` (the SDK's `models.list()` / `models.retrieve()`):
// the deployment's TTS and STT models in OpenAI's list shape. Each id is `{provider}/{model}`, which
// any `model` parameter of /oai accepts; `owned_by` is the provider, `created` the server's start.
// An operator's alias is listed by its own name with `alias_of`, the model it stands for.

interface OaiModel {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
  /** An operator's alias: the served model it stands for (docs/catalogue.md#operator-aliases). */
  alias_of?: string;
}

/** Each binding once by id (a provider's model that does both TTS and STT is one entry). */
function modelsById(ctx: AppContext): Map<string, OaiModel> {
  const created = Math.floor(Date.now() / 1000);
  const byId = new Map<string, OaiModel>();
  for (const b of ctx.catalogue.bindings) byId.set(`${b.provider.id}/${b.id}`, { id: `${b.provider.id}/${b.id}`, object: "model", created, owned_by: b.provider.id });
  for (const a of ctx.catalogue.modelAliases) {
    const owners = [...new Set(a.bindings.map((b) => b.provider.id))];
    byId.set(a.alias, { id: a.alias, object: "model", created, owned_by: owners.length === 1 ? owners[0] : "voxroute", alias_of: a.aliasOf });
  }
  return byId;
}

export function oaiModelsRoute(ctx: AppContext) {
  const byId = modelsById(ctx);
  const models = [...byId.values()];
  return new Elysia()
    .use(oaiAuth(ctx))
    .get("/models", () => ({ object: "list", data: models }))
    .get("/models/*", ({ params }) => {
      const id = decodeURIComponent(params["*"]);
      const model = byId.get(id);
      if (!model) throw new ApiError("model_not_found", `The model '${id}' does not exist`, { param: "model" }, 404);
      return model;
    });
}
