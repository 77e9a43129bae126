import { Elysia } from "elysia";
import { authenticate } from "../../accounts/keys.ts";
import type { AppContext } from "../../context.ts";
import type { Voice } from "../../providers/types.ts";
import { elevenLabsKey } from "./errors.ts";

// `GET /el/v1/models` and `GET /el/v1/voices` for ElevenLabs SDK users, from our catalogue and
// our TTS providers. Model ids are `{provider}/{model}`, so any of them can go back as `model_id`.

function modelsList(ctx: AppContext) {
  return ctx.catalogue.bindings
    .filter((b) => b.capability === "tts")
    .map((b) => ({
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
    }));
}

function elevenLabsVoice(provider: string, v: Voice) {
  return {
    voice_id: v.id,
    name: v.name,
    category: "premade",
    labels: { provider, ...(v.gender ? { gender: v.gender } : {}), ...(v.languages[0] ? { language: v.languages[0] } : {}) },
    description: `${v.name} (${provider})`,
    preview_url: null,
    available_for_tiers: [],
    settings: null,
    high_quality_base_model_ids: [],
    verified_languages: v.languages.map((language) => ({ language, model_id: "", accent: null, locale: null, preview_url: null })),
  };
}

export function elevenLabsCatalogueRoutes(ctx: AppContext) {
  const models = modelsList(ctx);
  return new Elysia()
    .get(
      "/v1/models",
      async ({ request }) => {
        await authenticate(ctx.database, elevenLabsKey(request.headers));
        return models;
      },
      { detail: { summary: "ElevenLabs-compatible model list", tags: ["el"] } },
    )
    .get(
      "/v1/voices",
      async ({ request }) => {
        await authenticate(ctx.database, elevenLabsKey(request.headers));
        // A provider that cannot list its voices right now is left out rather than failing the list.
        const lists = await Promise.all(
          [...ctx.providers.values()].map(async (p) => {
            try {
              return (await p.voices()).map((v) => elevenLabsVoice(p.id, v));
            } catch (err) {
              ctx.log.warn({ err, provider: p.id }, "listing voices failed");
              return [];
            }
          }),
        );
        const voices = lists.flat();
        return { voices, has_more: false, total_count: voices.length };
      },
      { detail: { summary: "ElevenLabs-compatible voice list", tags: ["el"] } },
    );
}
