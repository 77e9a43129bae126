import { describe, expect, test } from "bun:test";
import { manyVoices, manyVoicesCatalogue, STYLES, USES } from "./fakes/many-voices.ts";
import { Catalogue } from "../src/catalogue/catalogue.ts";
import { entryOfVoice, languagesOf, NO_METRICS, type VoiceEntry } from "../src/voices/voice-entry.ts";
import { contentVersionOf } from "../src/voices/voice-index-parts.ts";
import { VoiceIndex } from "../src/voices/voice-index.ts";
import type { VoiceQuery, VoiceSort } from "../src/voices/voice-query.ts";
import { searchVoices } from "../src/voices/voice-search.ts";
import { tokens } from "../src/voices/voice-tokens.ts";

// The search's precomputed index against a plain reading of the entries: for many queries (filters,
// words, prefixes, dates, every order), the index selects the same entries in the same order, with
// the same facet counts; so does an index rebuilt for new metrics only, and one searched many times
// over (its buffers are reused between searches).

const binding = new Catalogue(manyVoicesCatalogue()).bindings[0];
const start = Date.parse("2026-01-01T00:00:00Z");
const entries: VoiceEntry[] = manyVoices(1500, 11).map((v, i) =>
  entryOfVoice(v, binding, {
    firstSeenAt: new Date(start + (i % 97) * 3_600_000),
    metrics: i % 7 === 0 ? { ...NO_METRICS, popularity_score: (i * 37) % 1000, uses: 1 } : NO_METRICS,
  }),
);

/** Everything the search reads of an entry as text. */
function words(e: VoiceEntry): string[] {
  const v = e.voice;
  return tokens(
    [
      v.name,
      v.description,
      v.id,
      e.model.id,
      e.model.name,
      ...e.providers.flatMap((p) => [p.id, p.name]),
      ...v.languages.flatMap((l) => [l.id, l.name, l.locale ?? "", l.accent ?? ""]),
      v.category.name,
      ...v.labels.map((l) => l.value.name),
    ].join(" "),
  );
}

/** The query answered by reading every entry: the reference the index must agree with. */
function plainly(list: VoiceEntry[], q: VoiceQuery): VoiceEntry[] {
  const qWords = [...new Set(tokens(q.q ?? ""))];
  const score = (e: VoiceEntry) =>
    qWords.reduce((sum, w) => {
      const name = tokens(e.voice.name);
      const best = Math.max(name.includes(w) ? 4 : name.some((t) => t.startsWith(w)) ? 3 : 0, words(e).includes(w) ? 2 : words(e).some((t) => t.startsWith(w)) ? 1 : 0);
      return best === 0 ? Number.NEGATIVE_INFINITY : sum + best;
    }, 0);
  const anyOf = (values: string[] | undefined, have: string[]) => !values || values.some((v) => have.includes(v));
  const filters = new Map<string, string[]>();
  for (const f of q.filters ?? []) filters.set(f.facet, [...(filters.get(f.facet) ?? []), f.value]);
  const kept = list
    .map((e, position) => ({ e, position, score: score(e) }))
    .filter(({ e, score }) => {
      if (score === Number.NEGATIVE_INFINITY) return false;
      if (
        !anyOf(q.models, [e.model.id]) ||
        !anyOf(
          q.providers,
          e.providers.map((p) => p.id),
        ) ||
        !anyOf(q.categories, [e.voice.category.id])
      )
        return false;
      if (
        !anyOf(
          q.languages,
          e.voice.languages.flatMap((l) => [l.id, ...(l.locale ? [l.locale.toLowerCase()] : [])]),
        )
      )
        return false;
      for (const [facet, values] of filters)
        if (
          !anyOf(
            values,
            e.voice.labels.filter((l) => l.facet.id === facet).map((l) => l.value.id),
          )
        )
          return false;
      return q.addedAfter === undefined || Date.parse(e.voice.first_seen_at) > q.addedAfter;
    });
  const popularity = (e: VoiceEntry) => e.providers.reduce((n, p) => n + p.metrics.popularity_score, 0);
  const nameKey = (e: VoiceEntry) => tokens(e.voice.name).join(" ");
  const featured = (a: (typeof kept)[0], b: (typeof kept)[0]) => {
    const rank = (e: VoiceEntry) => ({ official: 0, community: 1 })[e.voice.category.id as "official"] ?? 3;
    return rank(a.e) - rank(b.e) || a.position - b.position;
  };
  const orders: Record<VoiceSort, (a: (typeof kept)[0], b: (typeof kept)[0]) => number> = {
    featured,
    relevance: (a, b) => b.score - a.score || featured(a, b),
    newest: (a, b) => Date.parse(b.e.voice.first_seen_at) - Date.parse(a.e.voice.first_seen_at) || featured(a, b),
    popular: (a, b) => popularity(b.e) - popularity(a.e) || featured(a, b),
    name: (a, b) => (nameKey(a.e) < nameKey(b.e) ? -1 : nameKey(a.e) > nameKey(b.e) ? 1 : featured(a, b)),
  };
  return kept.sort(orders[q.sort]).map((k) => k.e);
}

/** Queries drawn from the same vocabulary, with every kind of filter. */
function queries(count: number): VoiceQuery[] {
  let seed = 3;
  const r = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)];
  return Array.from({ length: count }, () => {
    const q = r() < 0.6 ? [pick([...STYLES, ...USES]), ...(r() < 0.3 ? [pick(["ka", "li", "ma", "na", "warm", "for"])] : [])].join(" ") : undefined;
    const sort = q && r() < 0.6 ? "relevance" : pick(["featured", "newest", "popular", "name"] as const);
    return {
      ...(q ? { q } : {}),
      languages: r() < 0.3 ? [pick(["en", "de", "fr", "en-gb", "pt-br", "ja"])] : undefined,
      categories: r() < 0.2 ? [pick(["official", "community"])] : undefined,
      filters: r() < 0.4 ? [{ facet: pick(["gender", "age", "style"]), value: pick(["female", "male", "young", "old", "warm", "calm"]) }] : undefined,
      addedAfter: r() < 0.2 ? start + Math.floor(r() * 97) * 3_600_000 : undefined,
      sort,
      limit: 1000,
      includeFacets: true,
    };
  });
}

const keys = (list: VoiceEntry[]) => list.map((e) => e.voice.id);

describe("the index answers as a plain reading of the entries", () => {
  const index = VoiceIndex.of(entries);

  test("the same entries, in the same order, for every kind of query, searched one after another", () => {
    let nonEmpty = 0;
    for (const q of queries(300)) {
      const page = searchVoices({ index, updatedAt: new Date() }, q);
      const expected = plainly(entries, q);
      expect({ q, got: keys(page.voices) }).toEqual({ q, got: keys(expected).slice(0, 1000) });
      expect(page.total_count).toBe(expected.length);
      if (expected.length) nonEmpty++;
    }
    expect(nonEmpty).toBeGreaterThan(150);
  }, 60_000); // 300 queries checked against a plain reading of 1,500 entries: seconds on a busy machine

  test("facet counts: each value's entries among those selected", () => {
    for (const q of queries(40)) {
      const page = searchVoices({ index, updatedAt: new Date() }, q);
      const selected = plainly(entries, q);
      for (const facet of page.facets!.filter((f) => !["model", "provider", "language", "category"].includes(f.id))) {
        for (const v of facet.values) expect(v.count).toBe(selected.filter((e) => e.voice.labels.some((l) => l.facet.id === facet.id && l.value.id === v.id)).length);
      }
    }
  }, 30_000);

  test("an index rebuilt for new metrics only sorts popular by them and keeps everything else", async () => {
    const rescored = entries.map((e, i) => ({ ...e, providers: e.providers.map((p) => ({ ...p, metrics: { ...NO_METRICS, popularity_score: i % 13 } })) }));
    expect(await contentVersionOf(rescored)).toBe(index.contentVersion);
    const reused = await VoiceIndex.build(rescored, index);
    const fresh = VoiceIndex.of(rescored);
    expect(reused.contentVersion).toBe(fresh.contentVersion);
    expect(reused.metricsVersion).not.toBe(index.metricsVersion);
    for (const q of queries(60)) {
      const a = searchVoices({ index: reused, updatedAt: new Date() }, q);
      const b = searchVoices({ index: fresh, updatedAt: new Date() }, q);
      expect(keys(a.voices)).toEqual(keys(b.voices));
      expect(a.facets).toEqual(b.facets);
    }
  });

  test("a chunked build is the index built at once", async () => {
    const built = await VoiceIndex.build(entries);
    expect(built.contentVersion).toBe(index.contentVersion);
    for (const q of queries(30)) expect(keys(searchVoices({ index: built, updatedAt: new Date() }, q).voices)).toEqual(keys(searchVoices({ index, updatedAt: new Date() }, q).voices));
  });
});

describe("tokens and languages", () => {
  test("words are lower-cased, without diacritics, split on anything else", () => {
    expect(tokens("Café-Crème, «Zoë» 2 x")).toEqual(["cafe", "creme", "zoe", "2", "x"]);
    expect(tokens("SLT (US English, female)")).toEqual(["slt", "us", "english", "female"]);
  });

  test("a bare language is dropped beside a locale of it; unknown codes keep their code as a name", () => {
    expect(languagesOf(["en", "en-US"])).toEqual([{ id: "en", name: "English", locale: "en-US", accent: "American" }]);
    expect(languagesOf(["de-de"], "bavarian")).toEqual([{ id: "de", name: "German", locale: "de-DE", accent: "Bavarian" }]);
    expect(languagesOf(["xex"])[0]).toMatchObject({ id: "xex", locale: null });
    expect(languagesOf(["not a tag!"])[0].name).toBeString();
  });
});
