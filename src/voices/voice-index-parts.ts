import { breath } from "../util/breath.ts";
import type { VoiceEntry } from "./voice-entry.ts";
import { FACET_TITLES } from "./voice-facets.ts";
import type { Item } from "./voice-order.ts";
import { searchText, TokenPostings, tokens } from "./voice-tokens.ts";

// The parts of a voice index that hold as long as its entries' content does: the postings of words
// and filter values, each entry's facet values as numbers, and the content's version.

interface FacetValue {
  facet: string;
  facetName: string;
  value: string;
  valueName: string;
}

/** Adds item `i` to `key`'s postings (items come in ascending order: once each). */
function push(map: Map<string, number[]>, key: string, i: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [i]);
  else if (list[list.length - 1] !== i) list.push(i);
}

/** Entries indexed between two breaths of the event loop while a large index is built. */
export const CHUNK = 250;

/** A running hash over entries, one at a time (versions). */
export class RunningHash {
  private h: number | bigint = 0;
  add(text: string): void {
    this.h = Bun.hash(text, this.h);
  }
  get value(): string {
    return this.h.toString(36);
  }
}

/** What versions count of an entry: all but its metrics and when it was last seen. */
function versionPart(e: VoiceEntry): string {
  const { last_seen_at: _, ...voice } = e.voice;
  return JSON.stringify([e.model, voice, e.providers.map((p) => [p.id, p.name, p.default, p.provider_model_id])]);
}

/** The entries' content as a version (see `VoiceIndex.contentVersion`), computed in chunks between breaths. */
export async function contentVersionOf(entries: readonly VoiceEntry[]): Promise<string> {
  const h = new RunningHash();
  for (let i = 0; i < entries.length; i++) {
    h.add(versionPart(entries[i]));
    if (i % CHUNK === CHUNK - 1) await breath();
  }
  return h.value;
}

/** An index's parts that hold as long as its entries' content does. */
export interface Parts {
  words: TokenPostings;
  nameWords: TokenPostings;
  /** `dimension\u0000value` → items: model, provider, language, locale, category, and `label:<facet>`. */
  postings: Map<string, Uint32Array>;
  facetValues: FacetValue[];
  itemFacets: Uint32Array[];
  byKey: Map<string, number>;
  contentVersion: string;
}

/** Item `i`'s words, filter values and facet values, added to the maps being built. */
export class PartsBuilder {
  private readonly words = new Map<string, number[]>();
  private readonly nameWords = new Map<string, number[]>();
  private readonly dims = new Map<string, number[]>();
  private readonly facetCodes = new Map<string, number>();
  private readonly facetValues: FacetValue[] = [];
  private readonly itemFacets: Uint32Array[] = [];
  private readonly byKey = new Map<string, number>();
  private readonly version = new RunningHash();

  add(e: VoiceEntry, item: Item, i: number): void {
    this.byKey.set(item.key, i);
    this.version.add(versionPart(e));
    for (const t of tokens(e.voice.name)) push(this.nameWords, t, i);
    for (const t of tokens(searchText(e))) push(this.words, t, i);
    const codes: number[] = [];
    const facet = (dim: string, facetName: string, value: string, valueName: string) => {
      const id = `${dim}\u0000${value}`;
      push(this.dims, id, i);
      let code = this.facetCodes.get(id);
      if (code === undefined) {
        code = this.facetValues.length;
        this.facetCodes.set(id, code);
        this.facetValues.push({ facet: dim.replace(/^label:/, ""), facetName, value, valueName });
      }
      if (!codes.includes(code)) codes.push(code);
    };
    facet("model", FACET_TITLES.model, e.model.id, e.model.name);
    for (const p of e.providers) facet("provider", FACET_TITLES.provider, p.id, p.name);
    for (const l of e.voice.languages) {
      facet("language", FACET_TITLES.language, l.id, l.name);
      if (l.locale) push(this.dims, `locale\u0000${l.locale.toLowerCase()}`, i);
    }
    facet("category", FACET_TITLES.category, e.voice.category.id, e.voice.category.name);
    for (const l of e.voice.labels) facet(`label:${l.facet.id}`, l.facet.name, l.value.id, l.value.name);
    this.itemFacets.push(Uint32Array.from(codes));
  }

  /** The parts, made in three steps (a breath may come between them). */
  *finish(): Generator<void, Parts> {
    const words = new TokenPostings(this.words);
    yield;
    const nameWords = new TokenPostings(this.nameWords);
    yield;
    const postings = new Map([...this.dims].map(([k, v]) => [k, Uint32Array.from(v)]));
    return { words, nameWords, postings, facetValues: this.facetValues, itemFacets: this.itemFacets, byKey: this.byKey, contentVersion: this.version.value };
  }
}
