import type { VoiceFacet } from "./voice-query.ts";

// Facet counts as answers list them: which facets, their titles and their order.

/** Facets in the order answers list them; a label facet not named here follows, by name. */
const FACET_ORDER = ["model", "provider", "language", "category", "gender", "accent", "age", "use_case", "style"];
export const FACET_TITLES: Record<string, string> = { model: "Model", provider: "Provider", language: "Language", category: "Category" };

/** Facet id → value id → count, summed over the indexes a search reads. */
export type FacetCounts = Map<string, { name: string; values: Map<string, { name: string; count: number }> }>;

export function facetList(counts: FacetCounts): VoiceFacet[] {
  const rank = (id: string) => {
    const i = FACET_ORDER.indexOf(id);
    return i === -1 ? FACET_ORDER.length : i;
  };
  return [...counts]
    .sort(([a, fa], [b, fb]) => rank(a) - rank(b) || fa.name.localeCompare(fb.name))
    .map(([id, f]) => ({
      id,
      name: f.name,
      values: [...f.values].map(([vid, v]) => ({ id: vid, name: v.name, count: v.count })).sort((a, b) => b.count - a.count || a.name.localeCompare(b.name)),
    }));
}
