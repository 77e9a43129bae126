import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { absolutePreview, type VoiceEntry } from "../../voices/voice-entry.ts";
import type { VoiceQuery, VoiceSort } from "../../voices/voice-query.ts";
import { voiceIdIn } from "../voice-id.ts";
import { elAuth } from "./auth.ts";
import { publicBase } from "../public-base.ts";

// ElevenLabs' voice listing (`voices.search` = `GET /v2/voices`, `voices.getAll` = `GET /v1/voices`,
// `voices.get` = `GET /v1/voices/{id}`) from the voice catalogue (docs/voices.md) and the
// caller's cloned voices. ElevenLabs' voices are not per model: each voice is listed once, as the
// catalogue has it for its provider's default model (a cloned voice: for its own model), with every
// model that has it in `high_quality_base_model_ids` (model ids as `/el/v1/models` spells them).

const PAGE_SIZE = { min: 1, max: 100, default: 10 };
const CATEGORY: Record<string, string> = { official: "premade", community: "professional", cloned: "cloned" };
const OUR_CATEGORIES: Record<string, string> = { premade: "official", professional: "community", generated: "community", famous: "community", high_quality: "community", cloned: "cloned" };

/** The model each provider's voices are listed with: its default TTS model, as a canonical slug. */
function listedModels(ctx: AppContext): Map<string, string> {
  return new Map(
    ctx.catalogue.providers.flatMap((p) => {
      const model = p.defaults.tts?.model;
      const canonical = model ? ctx.catalogue.lookup(model, "tts").find((b) => b.provider.id === p.id)?.canonical : undefined;
      return canonical ? [[p.id, canonical] as const] : [];
    }),
  );
}

/** A voice as ElevenLabs answers it, from its catalogue entries (one per model that has it). */
function elevenLabsVoice(entries: readonly VoiceEntry[]) {
  const { voice } = entries[0]!;
  const modelIds = entries.flatMap((e) => e.providers.filter((p) => p.default).map((p) => `${p.id}/${p.provider_model_id}`));
  return {
    voice_id: voice.id,
    name: voice.name,
    category: CATEGORY[voice.category.id] ?? "premade",
    // `provider`: which of this deployment's providers holds the voice (ElevenLabs' own labels are free-form).
    labels: { ...Object.fromEntries(voice.labels.map((l) => [l.facet.id, l.value.name])), provider: entries[0]!.providers[0]?.id ?? "" },
    description: voice.description || null,
    preview_url: voice.preview_url,
    available_for_tiers: [],
    settings: null,
    high_quality_base_model_ids: modelIds,
    verified_languages: entries.flatMap((e, i) => e.voice.languages.map((l) => ({ language: l.id, model_id: modelIds[i] ?? "", accent: l.accent, locale: l.locale, preview_url: null }))),
    created_at_unix: Math.floor(Date.parse(voice.first_seen_at) / 1000),
    is_owner: voice.scope.type === "organization",
  };
}

function pageSizeOf(params: URLSearchParams): number {
  const raw = params.get("page_size");
  if (raw === null) return PAGE_SIZE.default;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < PAGE_SIZE.min || n > PAGE_SIZE.max)
    throw new ApiError("invalid_request", `page_size must be a whole number from ${PAGE_SIZE.min} to ${PAGE_SIZE.max}`, { param: "page_size" });
  return n;
}

/** ElevenLabs' sorts: by name, or by when the voice was added (newest first; `asc` is not offered). */
function sortOf(params: URLSearchParams): VoiceSort {
  const sort = params.get("sort");
  if (sort === null) return params.get("search") ? "relevance" : "featured";
  if (sort === "name") return "name";
  if (sort === "created_at_unix" && params.get("sort_direction") !== "asc") return "newest";
  throw new ApiError("invalid_request", "sort is name, or created_at_unix with sort_direction desc", { param: "sort" });
}

/** The caller's cloned voices, each with its entries (one per model it can be used with). */
async function ownByVoice(ctx: AppContext, tenantId: string): Promise<Map<string, [VoiceEntry, ...VoiceEntry[]]>> {
  const byVoice = new Map<string, [VoiceEntry, ...VoiceEntry[]]>();
  for (const e of await ctx.voices.ownVoicesOf(tenantId)) {
    const entries = byVoice.get(e.voice.id);
    if (entries) entries.push(e);
    else byVoice.set(e.voice.id, [e]);
  }
  return byVoice;
}

/** What a listing asks for, from `GET /v2/voices`' query or from `GET /v1/voices`, which pages through every voice by name. */
interface VoicesAsked {
  search?: string;
  category?: string;
  voiceType?: string;
  sort: VoiceSort;
  limit: number;
  cursor?: string;
}

function askedOf(params: URLSearchParams): VoicesAsked {
  return {
    search: params.get("search") || undefined,
    category: params.get("category") || undefined,
    voiceType: params.get("voice_type") ?? undefined,
    sort: sortOf(params),
    limit: pageSizeOf(params),
    cursor: params.get("next_page_token") || undefined,
  };
}

/** A page of voices for the caller: the catalogue's voices once each, with its own cloned voices. */
async function searchPage(ctx: AppContext, tenantId: string, asked: VoicesAsked) {
  const mine = await ownByVoice(ctx, tenantId);
  const listed = listedModels(ctx);
  const models = new Set(listed.values());
  // A cloned voice is searched once, as if of its provider's listed model (its answer shows its own models).
  const ownOnce = [...mine.values()].map(([e]) => {
    const model = listed.get(e.providers[0]?.id ?? "");
    if (!model) models.add(e.model.id);
    return model ? { ...e, model: { ...e.model, id: model } } : e;
  });
  const { search, category, voiceType, sort, limit, cursor } = asked;
  const query: VoiceQuery = {
    ...(search ? { q: search } : {}),
    models: [...models],
    ...(category ? { categories: [OUR_CATEGORIES[category] ?? category] } : {}),
    ...(voiceType === "default" ? { categories: ["official"] } : {}),
    sort,
    limit,
    ...(cursor ? { cursor } : {}),
    includeFacets: false,
  };
  await ctx.voices.ready();
  const page = ctx.voices.search(query, { own: voiceType === "default" ? [] : ownOnce });
  return { page, entriesOf: (e: VoiceEntry) => mine.get(e.voice.id) ?? ctx.voices.entriesOfVoice(e.voice.id) };
}

export function elevenLabsVoicesRoutes(ctx: AppContext) {
  const base = (request: Request) => publicBase(ctx, request);
  const shown = (request: Request, entries: readonly VoiceEntry[]) => elevenLabsVoice(entries.map((e) => absolutePreview(e, base(request))));
  return new Elysia()
    .use(elAuth(ctx))
    .get("/v2/voices", async ({ request, principal }) => {
      const { page, entriesOf } = await searchPage(ctx, principal.tenantId, askedOf(new URL(request.url).searchParams));
      return {
        voices: page.voices.map((e) => shown(request, entriesOf(e))),
        has_more: page.has_more,
        total_count: page.total_count,
        next_page_token: page.next_cursor,
      };
    })
    .get("/v1/voices", async ({ request, principal }) => {
      const voices = [];
      let cursor: string | undefined;
      do {
        const { page, entriesOf } = await searchPage(ctx, principal.tenantId, { sort: "name", limit: PAGE_SIZE.max, cursor });
        voices.push(...page.voices.map((e) => shown(request, entriesOf(e))));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return { voices, has_more: false, total_count: voices.length };
    })
    .get("/v1/voices/*", async ({ request, principal }) => {
      const id = voiceIdIn(request, "/el/v1/voices/");
      const own = (await ownByVoice(ctx, principal.tenantId)).get(id);
      await ctx.voices.ready();
      const entries = own ?? ctx.voices.entriesOfVoice(id);
      if (!entries.length) throw new ApiError("not_found", `no voice ${id}`);
      return shown(request, entries);
    });
}
