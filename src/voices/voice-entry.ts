import type { Binding } from "../catalogue/types.ts";
import type { Voice } from "../providers/types.ts";

// The voice catalogue's entry, in the shape `GET /v1/voices` answers (docs/voices.md), and the
// builder that makes one of a provider's `Voice`. Everything the search indexes is read back from
// this shape, so an entry made elsewhere (a tenant's cloned voice) is searched like any other.

export interface Named {
  id: string;
  name: string;
}

export interface VoiceLanguage {
  /** The language's primary subtag, lower case: `en`. */
  id: string;
  /** Its English name: `English`. */
  name: string;
  /** The full tag when it says more than the language: `en-US`; else null. */
  locale: string | null;
  accent: string | null;
}

export interface VoiceLabel {
  facet: Named;
  value: Named;
}

/** Uses of one provider's voice on this deployment (voice-metrics.ts). */
export interface VoiceMetricsView {
  popularity_score: number;
  /** This deployment has no likes, saves or shares: always 0. */
  likes: number;
  saves: number;
  shares: number;
  uses: number;
  characters_7d: number;
  characters_1y: number;
  clones: number;
}

export interface VoiceProviderOffer {
  id: string;
  name: string;
  /** The provider a request naming only the model and voice is routed to first. */
  default: boolean;
  provider_model_id: string;
  metrics: VoiceMetricsView;
}

export type VoiceScope = "global" | "organization";

export interface VoiceEntry {
  model: Named;
  voice: {
    /** What a request names as `voice`, exactly. */
    id: string;
    name: string;
    description: string;
    category: Named;
    /** An absolute URL, or a path of this server (`/v1/voices/preview?…`) made absolute by the route (`absolutePreview`). */
    preview_url: string | null;
    languages: VoiceLanguage[];
    labels: VoiceLabel[];
    source_urls: string[];
    scope: { type: VoiceScope };
    first_seen_at: string;
    last_seen_at: string;
  };
  providers: VoiceProviderOffer[];
}

export const NO_METRICS: VoiceMetricsView = Object.freeze({ popularity_score: 0, likes: 0, saves: 0, shares: 0, uses: 0, characters_7d: 0, characters_1y: 0, clones: 0 });

/** What `entryOfVoice` is told beyond the voice and its binding. */
export interface EntryDetails {
  /** `official` / `community` from the voice when absent; cloned voices say `cloned`. */
  category?: string;
  scope?: VoiceScope;
  /** Overrides the voice's own `previewUrl` (the router's sample of an embedded voice). */
  previewUrl?: string | null;
  firstSeenAt?: Date;
  lastSeenAt?: Date;
  metrics?: VoiceMetricsView;
  /** Whether this provider is the model's first (default) route; default true. */
  default?: boolean;
  sourceUrls?: string[];
}

/**
 * A provider's voice as a catalogue entry of one model: `binding` names the model and the provider
 * serving it. Entries of the same model and voice id from several providers are joined with
 * `mergeOffers`. Exported for the cloned voices (`scope: organization`, `category: cloned`).
 */
export function entryOfVoice(voice: Voice, binding: Binding, details: EntryDetails = {}): VoiceEntry {
  const languages = languagesOf(voice.languages, voice.accent);
  const now = new Date();
  return {
    model: { id: binding.canonical, name: binding.model.name },
    voice: {
      id: voice.id,
      name: voice.name,
      description: voice.description ?? describe(voice, languages, binding.model.name),
      category: named(details.category ?? voice.category ?? "official"),
      preview_url: details.previewUrl !== undefined ? details.previewUrl : (voice.previewUrl ?? null),
      languages,
      labels: labelsOf(voice, languages),
      source_urls: details.sourceUrls ?? [],
      scope: { type: details.scope ?? "global" },
      first_seen_at: (details.firstSeenAt ?? now).toISOString(),
      last_seen_at: (details.lastSeenAt ?? now).toISOString(),
    },
    providers: [{ id: binding.provider.id, name: binding.provider.name, default: details.default ?? true, provider_model_id: binding.id, metrics: details.metrics ?? NO_METRICS }],
  };
}

/**
 * One entry of a voice several providers offer for the same model: the first entry's description
 * (filled in from the others where it has none), every provider in the order given, seen from the
 * earliest first sighting to the latest last one.
 */
export function mergeOffers(entries: VoiceEntry[]): VoiceEntry {
  const [first, ...rest] = entries;
  if (rest.length === 0) return first;
  const voice = { ...first.voice };
  for (const e of rest) {
    voice.preview_url ??= e.voice.preview_url;
    if (e.voice.first_seen_at < voice.first_seen_at) voice.first_seen_at = e.voice.first_seen_at;
    if (e.voice.last_seen_at > voice.last_seen_at) voice.last_seen_at = e.voice.last_seen_at;
    voice.source_urls = [...new Set([...voice.source_urls, ...e.voice.source_urls])];
  }
  return { model: first.model, voice, providers: entries.flatMap((e) => e.providers) };
}

/** The entry with a preview path of this server made absolute under `base` (its public address). */
export function absolutePreview(entry: VoiceEntry, base: string): VoiceEntry {
  const url = entry.voice.preview_url;
  return url?.startsWith("/") ? { ...entry, voice: { ...entry.voice, preview_url: `${base}${url}` } } : entry;
}

// ---- names, languages, labels ----

/** Every `voice.category.id` there is, in the `featured` order (docs/voices.md). */
export const VOICE_CATEGORIES = ["official", "community", "cloned"] as const;

const CATEGORY_NAMES: Record<string, string> = { official: "Official", community: "Community", cloned: "Cloned" };

const FACET_NAMES: Record<string, string> = { gender: "Gender", accent: "Accent", age: "Age", use_case: "Use case", style: "Style" };

/**
 * What `fn` answered for each argument, kept: labels, categories and language tags repeat across
 * a provider's voices, and the catalogue is rebuilt from them at every refresh. Bounded: past
 * `max` different arguments it starts over.
 */
function remembered<T>(fn: (arg: string) => T, max = 10_000): (arg: string) => T {
  const known = new Map<string, T>();
  return (arg) => {
    let v = known.get(arg);
    if (v === undefined) {
      if (known.size >= max) known.clear();
      known.set(arg, (v = fn(arg)));
    }
    return v;
  };
}

/** Lower-case words joined by `_`: how facet and value ids are spelled (`Middle aged` → `middle_aged`). */
export const slug = remembered(
  (text: string) =>
    text
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N}]+/gu, "_")
      .replace(/^_+|_+$/g, "") || "_",
);

/** A value as people read it: `middle_aged` → `Middle aged`. */
const display = remembered((text: string) => {
  const spaced = text.replaceAll("_", " ").trim();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
});

function named(category: string): Named {
  const id = slug(category);
  return { id, name: CATEGORY_NAMES[id] ?? display(category) };
}

const displayNames = new Intl.DisplayNames(["en"], { type: "language", fallback: "code" });

/** A language's English name; its code when it has none. */
const languageName = remembered((id: string) => {
  try {
    return displayNames.of(id) ?? id;
  } catch {
    return id;
  }
});

/** How a region's English is usually called, where a voice does not say its accent. */
const REGIONAL_ACCENTS: Record<string, string> = {
  "en-US": "American",
  "en-GB": "British",
  "en-AU": "Australian",
  "en-CA": "Canadian",
  "en-IE": "Irish",
  "en-IN": "Indian",
  "en-NZ": "New Zealand",
  "en-ZA": "South African",
  "es-MX": "Mexican",
  "es-ES": "Castilian",
  "fr-CA": "Canadian",
  "pt-BR": "Brazilian",
  "pt-PT": "European",
};

const canonicalTag = remembered((tag: string) => {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? tag;
  } catch {
    return tag;
  }
});

/**
 * The voice's languages: each tag's language and locale, a bare language dropped where a locale
 * of it is listed too (`en`, `en-US` → one). The voice's own accent goes with its first language.
 */
export function languagesOf(tags: readonly string[], accent?: string): VoiceLanguage[] {
  const seen = new Map<string, VoiceLanguage>();
  tags.forEach((tag, i) => {
    const canonical = canonicalTag(tag.trim());
    if (!canonical) return;
    const id = canonical.split("-")[0].toLowerCase();
    const locale = canonical.includes("-") ? canonical : null;
    const own = i === 0 && accent ? display(accent) : undefined;
    const entry = { id, name: languageName(id), locale, accent: own ?? (locale ? (REGIONAL_ACCENTS[locale] ?? null) : null) };
    seen.set(`${id}|${locale ?? ""}`, entry);
  });
  const all = [...seen.values()];
  return all.filter((l) => l.locale !== null || !all.some((o) => o.id === l.id && o.locale !== null));
}

function label(facet: string, value: string): VoiceLabel {
  const id = slug(facet);
  return { facet: { id, name: FACET_NAMES[id] ?? display(facet) }, value: { id: slug(value), name: display(value) } };
}

/** Gender, accent (said or of its first locale) and the provider's other labels, as facet/value pairs. */
function labelsOf(voice: Voice, languages: VoiceLanguage[]): VoiceLabel[] {
  const labels: VoiceLabel[] = [];
  if (voice.gender) labels.push(label("gender", voice.gender));
  const accent = voice.accent ?? languages[0]?.accent;
  if (accent) labels.push(label("accent", accent));
  for (const [facet, value] of Object.entries(voice.labels ?? {})) if (value) labels.push(label(facet, value));
  return labels;
}

/** A description for a voice its provider gives none: `Female British English voice of Flite`. */
function describe(voice: Voice, languages: VoiceLanguage[], model: string): string {
  const first = languages[0];
  const parts = [voice.gender ? display(voice.gender) : "", first?.accent ?? "", first?.name ?? ""].filter(Boolean);
  return `${parts.length ? parts.join(" ") : "A"} voice of ${model}`;
}
