import { Elysia } from "elysia";
import type { Binding } from "../../catalogue/types.ts";
import type { AppContext } from "../../context.ts";
import { elAuth } from "./auth.ts";

// `GET /el/v1/models` for ElevenLabs SDK users, from our catalogue (the voices: voices-routes.ts). Model ids are `{provider}/{model}`, so any of them can go back as `model_id`; an operator's alias is listed by its name, with `alias_of`.

function modelsList(ctx: AppContext) {
  const aliases = ctx.catalogue.modelAliases.flatMap((a) => {
    const tts = a.bindings.filter((b) => b.capability === "tts");
    if (tts.length === 0) return [];
    return [{ ...modelEntry(tts[0]), model_id: a.alias, name: `${a.alias} (alias of ${a.aliasOf})`, description: `An alias of ${a.aliasOf}, set by the operator`, alias_of: a.aliasOf }];
  });
  return [...ctx.catalogue.bindings.filter((b) => b.capability === "tts").map(modelEntry), ...aliases];
}

function modelEntry(b: Binding) {
  return {
    model_id: `${b.provider.id}/${b.id}`,
    name: `${b.model.name} (${b.provider.name})`,
    can_do_text_to_speech: true,
    can_do_voice_conversion: false,
    can_be_finetuned: false,
    can_use_style: b.provider.id === "elevenlabs",
    can_use_speaker_boost: b.provider.id === "elevenlabs",
    serves_pro_voices: false,
    token_cost_factor: 1,
    description: `${b.model.canonical} served by ${b.provider.name}`,
    requires_alpha_access: false,
    languages: [],
  };
}

export function elevenLabsCatalogueRoutes(ctx: AppContext) {
  const models = modelsList(ctx);
  return new Elysia().use(elAuth(ctx)).get("/v1/models", () => models);
}
