import type { VoiceEntry } from "./voice-entry.ts";

// What a voice search asks for and what it answers: the query the surfaces build and the page they map.

export type VoiceSort = "featured" | "relevance" | "newest" | "popular" | "name";
export const VOICE_SORTS: readonly VoiceSort[] = ["featured", "relevance", "newest", "popular", "name"];

export interface VoiceFilter {
  /** A facet id: a label's (`gender`) or `model`, `provider`, `language`, `category`. */
  facet: string;
  /** The value's id, as `slug` spells it. */
  value: string;
}

export interface VoiceQuery {
  q?: string;
  /** Canonical model slugs: any of them. */
  models?: string[];
  providers?: string[];
  /** Language ids (`en`) or locales (`en-us`), lower case: any of them. */
  languages?: string[];
  categories?: string[];
  /** Values of one facet: any of them; of different facets: all. */
  filters?: VoiceFilter[];
  /** Epoch ms: only voices first seen after it. */
  addedAfter?: number;
  sort: VoiceSort;
  limit: number;
  cursor?: string;
  includeFacets: boolean;
}

export interface VoiceFacet {
  id: string;
  name: string;
  values: { id: string; name: string; count: number }[];
}

export interface VoicePage {
  voices: VoiceEntry[];
  total_count: number;
  has_more: boolean;
  next_cursor: string | null;
  catalogue_updated_at: string;
  facets?: VoiceFacet[];
}
