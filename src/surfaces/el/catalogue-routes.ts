import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import type { Voice } from "../../providers/types.ts";
import { elAuth } from "./auth.ts";

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

/** How long a provider's voice list is reused. */
const VOICES_TTL_MS = 5 * 60_000;

/**
 * The voices of every TTS provider, each list cached for a while (a listing calls every cloud
 * provider's API otherwise) and bounded by the provider connect timeout: a provider that fails or
 * stalls is left out of this answer rather than failing or hanging it.
 */
function voiceLists(ctx: AppContext) {
  const cache = new Map<string, { at: number; voices: Voice[] }>();
  return () =>
    Promise.all(
      [...ctx.providers.values()].map(async (p) => {
        const hit = cache.get(p.id);
        if (hit && Date.now() - hit.at < VOICES_TTL_MS) return { provider: p.id, voices: hit.voices };
        let timer: Timer | undefined;
        const ms = ctx.config.providerConnectTimeoutMs;
        try {
          const voices = await Promise.race([p.voices(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)))]);
          cache.set(p.id, { at: Date.now(), voices });
          return { provider: p.id, voices };
        } catch (err) {
          ctx.log.warn({ err, provider: p.id }, "listing voices failed");
          return { provider: p.id, voices: [] };
        } finally {
          clearTimeout(timer);
        }
      }),
    );
}

export function elevenLabsCatalogueRoutes(ctx: AppContext) {
  const models = modelsList(ctx);
  const lists = voiceLists(ctx);
  return new Elysia()
    .use(elAuth(ctx))
    .get("/v1/models", () => models, { detail: { summary: "ElevenLabs-compatible model list", tags: ["el"] } })
    .get(
      "/v1/voices",
      async () => {
        const voices = (await lists()).flatMap(({ provider, voices }) => voices.map((v) => elevenLabsVoice(provider, v)));
        return { voices, has_more: false, total_count: voices.length };
      },
      { detail: { summary: "ElevenLabs-compatible voice list", tags: ["el"] } },
    );
}
