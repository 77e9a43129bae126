import { breath } from "../util/breath.ts";
import type { VoiceEntry } from "./voice-entry.ts";
import { FACET_TITLES, type FacetCounts } from "./voice-facets.ts";
import { CHUNK, type Parts, PartsBuilder, RunningHash } from "./voice-index-parts.ts";
import { type Comparator, type Item, itemOf, ORDERS } from "./voice-order.ts";
import type { VoiceQuery, VoiceSort } from "./voice-query.ts";
import { tokens } from "./voice-tokens.ts";

// The index a voice search reads: filters, text, sort orders and facet counts. Everything
// a request could compute from the entries is computed once, when an index is built (lower-cased
// tokens and their postings, each filter value's postings, every sort order but relevance, each
// entry's facet values as numbers), so a request only combines postings and counts.

/** Query-token weights: a word of the voice's name counts more than one of its other metadata; a whole word more than a prefix. */
const WEIGHT = { nameExact: 4, namePrefix: 3, exact: 2, prefix: 1 } as const;

/** What one index found for a query: its items in the query's order, and their scores for `relevance`. */
export interface Match {
  index: VoiceIndex;
  hits: ArrayLike<number>;
  /** Every item: nothing narrowed the selection (its facet counts are the index's own). */
  all: boolean;
  /** Valid until the index's next `match` (its scratch buffer): read within the same search. */
  scores: Uint16Array | undefined;
}

/**
 * Indexes entries, one chunk at a time: `step` is called between chunks (a breath of the event
 * loop for the catalogue's large index, nothing for a caller's few own voices). With `reuse` (an
 * index of the same content: only metrics changed) its parts are taken as they are.
 */
function* indexing(entries: readonly VoiceEntry[], reuse: VoiceIndex | undefined): Generator<void, VoiceIndex> {
  const items: Item[] = [];
  const metrics = new RunningHash();
  const parts = reuse ? undefined : new PartsBuilder();
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    items.push(itemOf(e, i));
    metrics.add(JSON.stringify(e.providers.map((p) => p.metrics)));
    parts?.add(e, items[i], i);
    if (i % CHUNK === CHUNK - 1) yield;
  }
  const index = new VoiceIndex(items, metrics.value, parts ? yield* parts.finish() : reuse!.parts);
  for (const sort of reuse ? (["popular"] as const) : (Object.keys(ORDERS) as (keyof typeof ORDERS)[])) {
    yield;
    index.orders.set(sort, index.sorted(ORDERS[sort]));
  }
  if (reuse) for (const [sort, order] of reuse.orders) if (!index.orders.has(sort)) index.orders.set(sort, order);
  return index;
}

/**
 * An immutable, searchable set of entries. The catalogue's is built (`build`) when its lists or
 * metrics change; a caller's own voices get a small one per request (`of`).
 */
export class VoiceIndex {
  /** Sorted item numbers for every order but relevance; filled by `indexing`. */
  readonly orders = new Map<Exclude<VoiceSort, "relevance">, Uint32Array>();

  constructor(
    readonly items: Item[],
    /** Changes when a voice's metrics change (the `popular` order). */
    readonly metricsVersion: string,
    readonly parts: Parts,
  ) {}

  /** An index built at once (a few entries). */
  static of(entries: readonly VoiceEntry[]): VoiceIndex {
    const run = indexing(entries, undefined);
    for (;;) {
      const step = run.next();
      if (step.done) return step.value;
    }
  }

  /**
   * An index built a chunk at a time, the event loop served between chunks. `reuse`: an index of
   * the same content (`contentVersionOf` agrees), of which only the metrics changed.
   */
  static async build(entries: readonly VoiceEntry[], reuse?: VoiceIndex): Promise<VoiceIndex> {
    const run = indexing(entries, reuse);
    for (;;) {
      const step = run.next();
      if (step.done) return step.value;
      await breath();
    }
  }

  /** Changes when anything a search or its order reads changes, save the metrics (and `last_seen_at`, which moves with every refresh). */
  get contentVersion(): string {
    return this.parts.contentVersion;
  }

  get size(): number {
    return this.items.length;
  }

  /** The entry of `model` (canonical slug) and voice id. */
  entry(model: string, voice: string): VoiceEntry | undefined {
    const i = this.parts.byKey.get(`${model}\u0000${voice}`);
    return i === undefined ? undefined : this.items[i].entry;
  }

  /** The items in `compare`'s order (while the index is being built). */
  sorted(compare: Comparator): Uint32Array {
    return Uint32Array.from(this.items.map((_, i) => i).sort((a, b) => compare(this.items[a], this.items[b])));
  }

  /** Marks in `mask` the items of any of `values` in one dimension. */
  private markAnyOf(mask: Uint8Array, dim: string, values: readonly string[]): Uint8Array {
    for (const v of values) {
      const items = this.parts.postings.get(`${dim}\u0000${v}`);
      if (items) for (let k = 0; k < items.length; k++) mask[items[k]] = 1;
    }
    return mask;
  }

  /**
   * Buffers of one item each that a search works in: searches run one at a time on the event loop
   * and nothing keeps them past the answer, so one set per index does, and no request allocates them.
   */
  private scratch: { alive: Uint8Array; mask: Uint8Array; scores: Uint16Array } | undefined;

  /** The items the query selects, in its order. */
  match(query: VoiceQuery): Match {
    const n = this.items.length;
    const s = (this.scratch ??= { alive: new Uint8Array(n), mask: new Uint8Array(n), scores: new Uint16Array(n) });
    let narrowed = false;
    /** Narrows the selection to the items `mask` marks (non-zero). */
    const keep = (mask: Uint8Array) => {
      for (let i = 0; i < n; i++) s.alive[i] = mask[i] !== 0 && (!narrowed || s.alive[i] !== 0) ? 1 : 0;
      narrowed = true;
    };
    const mask = (dim: string, values: readonly string[]) => this.markAnyOf(s.mask.fill(0), dim, values);
    if (query.models) keep(mask("model", query.models));
    if (query.providers) keep(mask("provider", query.providers));
    if (query.languages) keep(this.markAnyOf(mask("language", query.languages), "locale", query.languages));
    if (query.categories) keep(mask("category", query.categories));
    const byFacet = new Map<string, string[]>();
    for (const f of query.filters ?? []) byFacet.set(f.facet, [...(byFacet.get(f.facet) ?? []), f.value]);
    for (const [facet, values] of byFacet) keep(mask(facet in FACET_TITLES ? facet : `label:${facet}`, values));

    const words = [...new Set(tokens(query.q ?? ""))];
    const scores = words.length ? s.scores.fill(0) : undefined;
    for (const word of words) {
      // The word's best weight in each item: a whole word of the name down to a prefix of other metadata.
      const best = s.mask.fill(0);
      const weigh = (w: number) => (postings: Uint32Array) => {
        for (let k = 0; k < postings.length; k++) if (best[postings[k]] < w) best[postings[k]] = w;
      };
      this.parts.words.forPrefix(word, (p, exact) => weigh(exact ? WEIGHT.exact : WEIGHT.prefix)(p));
      this.parts.nameWords.forPrefix(word, (p, exact) => weigh(exact ? WEIGHT.nameExact : WEIGHT.namePrefix)(p));
      for (let i = 0; i < n; i++) scores![i] += best[i];
      keep(best);
    }
    const alive = narrowed ? s.alive : undefined;
    const after = query.addedAfter;
    const selected = (i: number) => alive?.[i] !== 0 && (after === undefined || this.items[i].firstSeen > after);
    const order = this.orders.get(query.sort === "relevance" ? "featured" : query.sort)!;
    if (!alive && after === undefined) return { index: this, hits: order, all: true, scores };
    const hits: number[] = [];
    if (query.sort === "relevance" && scores) {
      // Scores are small whole numbers: buckets of the featured order, best first, sort without comparing.
      const buckets: number[][] = [];
      for (let k = 0; k < order.length; k++) if (selected(order[k])) (buckets[scores[order[k]]] ??= []).push(order[k]);
      for (let score = buckets.length - 1; score >= 0; score--) for (const i of buckets[score] ?? []) hits.push(i);
    } else {
      for (let k = 0; k < order.length; k++) if (selected(order[k])) hits.push(order[k]);
    }
    return { index: this, hits, all: false, scores };
  }

  /** Facet value counts over what `match` found, added into `into` (facet id → value id → count). */
  countFacets(match: Match, into: FacetCounts): void {
    const { facetValues } = this.parts;
    const counts = match.all ? (this.allCounts ??= this.counts(match.hits)) : this.counts(match.hits);
    counts.forEach((count, code) => {
      if (!count) return;
      const fv = facetValues[code];
      let facet = into.get(fv.facet);
      if (!facet) into.set(fv.facet, (facet = { name: fv.facetName, values: new Map() }));
      const value = facet.values.get(fv.value);
      if (value) value.count += count;
      else facet.values.set(fv.value, { name: fv.valueName, count });
    });
  }
  /** Counts of each facet value over the whole index, made on first use. */
  private allCounts: Uint32Array | undefined;

  private counts(hits: ArrayLike<number>): Uint32Array {
    const { facetValues, itemFacets } = this.parts;
    const counts = new Uint32Array(facetValues.length);
    for (let k = 0; k < hits.length; k++) {
      const codes = itemFacets[hits[k]];
      for (let c = 0; c < codes.length; c++) counts[codes[c]]++;
    }
    return counts;
  }
}
