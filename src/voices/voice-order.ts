import { VOICE_CATEGORIES, type VoiceEntry } from "./voice-entry.ts";
import type { VoiceSort } from "./voice-query.ts";
import { tokens } from "./voice-tokens.ts";

// The orders a search can list voices in (all but relevance, which is scored per query), over each
// entry's sort keys computed once when it is indexed.

const CATEGORY_RANK: Record<string, number> = Object.fromEntries(VOICE_CATEGORIES.map((category, rank) => [category, rank]));

/** An entry as an index holds it, with its sort keys. */
export interface Item {
  entry: VoiceEntry;
  /** Place in the order the entries were given (the catalogue's provider and list order). */
  position: number;
  /** 0: the caller's own (organization) voice; 1: global. */
  scope: number;
  categoryRank: number;
  firstSeen: number;
  popularity: number;
  nameKey: string;
  key: string;
}

export type Comparator = (a: Item, b: Item) => number;

export const featured: Comparator = (a, b) => a.scope - b.scope || a.categoryRank - b.categoryRank || a.position - b.position || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
export const ORDERS: Record<Exclude<VoiceSort, "relevance">, Comparator> = {
  featured,
  newest: (a, b) => b.firstSeen - a.firstSeen || featured(a, b),
  popular: (a, b) => b.popularity - a.popularity || featured(a, b),
  name: (a, b) => (a.nameKey < b.nameKey ? -1 : a.nameKey > b.nameKey ? 1 : featured(a, b)),
};

const itemKey = (e: VoiceEntry) => `${e.model.id}\u0000${e.voice.id}`;

export function itemOf(entry: VoiceEntry, position: number): Item {
  return {
    entry,
    position,
    scope: entry.voice.scope.type === "organization" ? 0 : 1,
    categoryRank: CATEGORY_RANK[entry.voice.category.id] ?? 3,
    firstSeen: Date.parse(entry.voice.first_seen_at),
    popularity: entry.providers.reduce((n, p) => n + p.metrics.popularity_score, 0),
    nameKey: tokens(entry.voice.name).join(" "),
    key: itemKey(entry),
  };
}
