import { ApiError } from "../errors.ts";
import { breath } from "../util/breath.ts";
import { VOICE_CATEGORIES, type VoiceEntry } from "./voice-entry.ts";

// Search over the voice catalogue: filters, text, sort orders, facet counts and cursors. Everything
// a request could compute from the entries is computed once, when an index is built (lower-cased
// tokens and their postings, each filter value's postings, every sort order but relevance, each
// entry's facet values as numbers), so a request only combines postings and counts.

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

/** Facets in the order answers list them; a label facet not named here follows, by name. */
const FACET_ORDER = ["model", "provider", "language", "category", "gender", "accent", "age", "use_case", "style"];
const FACET_TITLES: Record<string, string> = { model: "Model", provider: "Provider", language: "Language", category: "Category" };
const CATEGORY_RANK: Record<string, number> = Object.fromEntries(VOICE_CATEGORIES.map((category, rank) => [category, rank]));

/** Query-token weights: a word of the voice's name counts more than one of its other metadata; a whole word more than a prefix. */
const WEIGHT = { nameExact: 4, namePrefix: 3, exact: 2, prefix: 1 } as const;

/** Lower-case words without diacritics: how entries and queries are cut into tokens. */
export function tokens(text: string): string[] {
  // Most metadata is printable ASCII, which has no diacritics to take off and splits on a simpler pattern.
  if (/^[ -~]*$/.test(text))
    return text
      .toLowerCase()
      .split(/[^a-z0-9]+/)
      .filter(Boolean);
  return text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

interface Item {
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

type Comparator = (a: Item, b: Item) => number;

const featured: Comparator = (a, b) => a.scope - b.scope || a.categoryRank - b.categoryRank || a.position - b.position || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
const ORDERS: Record<Exclude<VoiceSort, "relevance">, Comparator> = {
  featured,
  newest: (a, b) => b.firstSeen - a.firstSeen || featured(a, b),
  popular: (a, b) => b.popularity - a.popularity || featured(a, b),
  name: (a, b) => (a.nameKey < b.nameKey ? -1 : a.nameKey > b.nameKey ? 1 : featured(a, b)),
};

/** A sorted token list with each token's postings (item numbers, ascending). */
class TokenPostings {
  readonly tokens: string[];
  readonly postings: Uint32Array[];

  constructor(byToken: Map<string, number[]>) {
    this.tokens = [...byToken.keys()].sort();
    this.postings = this.tokens.map((t) => Uint32Array.from(byToken.get(t)!));
  }

  /** Calls `visit` with the postings of every token that starts with `prefix`, and whether it is the whole token. */
  forPrefix(prefix: string, visit: (postings: Uint32Array, exact: boolean) => void): void {
    let lo = 0;
    let hi = this.tokens.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.tokens[mid] < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.tokens.length && this.tokens[i].startsWith(prefix); i++) visit(this.postings[i], this.tokens[i] === prefix);
  }
}

interface FacetValue {
  facet: string;
  facetName: string;
  value: string;
  valueName: string;
}

/** What one index found for a query: its items in the query's order, and their scores for `relevance`. */
interface Match {
  index: VoiceIndex;
  hits: ArrayLike<number>;
  /** Every item: nothing narrowed the selection (its facet counts are the index's own). */
  all: boolean;
  /** Valid until the index's next `match` (its scratch buffer): read within the same search. */
  scores: Uint16Array | undefined;
}

/** Adds item `i` to `key`'s postings (items come in ascending order: once each). */
function push(map: Map<string, number[]>, key: string, i: number): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [i]);
  else if (list[list.length - 1] !== i) list.push(i);
}

const itemKey = (e: VoiceEntry) => `${e.model.id}\u0000${e.voice.id}`;

/** Hash of a string, as a short base-36 text (query fingerprints). */
const fingerprint = (text: string) => Bun.hash(text).toString(36);

/** Entries indexed between two breaths of the event loop while a large index is built. */
const CHUNK = 250;

/** A running hash over entries, one at a time (versions). */
class RunningHash {
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
interface Parts {
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
class PartsBuilder {
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

function itemOf(entry: VoiceEntry, position: number): Item {
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
  countFacets(match: Match, into: Map<string, { name: string; values: Map<string, { name: string; count: number }> }>): void {
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

/** What a text query is matched against: names, description, ids, model, providers, languages, category and labels. */
function searchText(e: VoiceEntry): string {
  const v = e.voice;
  return [
    v.name,
    v.description,
    v.id,
    e.model.id,
    e.model.name,
    ...e.providers.flatMap((p) => [p.id, p.name]),
    ...v.languages.flatMap((l) => [l.id, l.name, l.locale ?? "", l.accent ?? ""]),
    v.category.name,
    ...v.labels.map((l) => l.value.name),
  ].join(" ");
}

// ---- answering a query ----

/** What a cursor says: the catalogue it was cut from, the query's fingerprint, and where the next page starts. */
interface Cursor {
  v: string;
  m?: string;
  own?: string;
  q: string;
  n: number;
}

/** What the answer is cut from: the catalogue's index and when its content last changed. */
export interface Searchable {
  index: VoiceIndex;
  updatedAt: Date;
}

function queryFingerprint(q: VoiceQuery): string {
  const sorted = (xs?: string[]) => (xs ? [...xs].sort() : null);
  const filters = q.filters ? q.filters.map((f) => `${f.facet}:${f.value}`).sort() : null;
  return fingerprint(JSON.stringify([q.q ?? null, sorted(q.models), sorted(q.providers), sorted(q.languages), sorted(q.categories), filters, q.addedAfter ?? null, q.sort]));
}

const encodeCursor = (c: Cursor) => Buffer.from(JSON.stringify(c)).toString("base64url");

function decodeCursor(text: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Cursor;
    if (typeof c.v === "string" && typeof c.q === "string" && Number.isInteger(c.n) && c.n >= 0) return c;
  } catch {}
  throw new ApiError("invalid_request", "cursor is not a cursor of this endpoint", { param: "cursor" });
}

/** `limit` items of `hits` from `offset`. */
function sliceOf(hits: ArrayLike<number>, offset: number, limit: number): number[] {
  const out: number[] = [];
  for (let k = offset; k < hits.length && out.length < limit; k++) out.push(hits[k]);
  return out;
}

/** `a` and `b` merged in the query's order (each is in it already). */
function merged(a: Match, b: Match, sort: VoiceSort): { index: VoiceIndex; i: number }[] {
  const compare = sort === "relevance" ? featured : ORDERS[sort];
  const score = (m: Match, i: number) => (sort === "relevance" && m.scores ? m.scores[i] : 0);
  const out: { index: VoiceIndex; i: number }[] = [];
  let x = 0;
  let y = 0;
  while (x < a.hits.length || y < b.hits.length) {
    const ia = a.hits[x];
    const ib = b.hits[y];
    const takeA = y >= b.hits.length || (x < a.hits.length && (score(b, ib) - score(a, ia) || compare(a.index.items[ia], b.index.items[ib])) <= 0);
    if (takeA) out.push({ index: a.index, i: a.hits[x++] });
    else out.push({ index: b.index, i: b.hits[y++] });
  }
  return out;
}

function facetList(counts: Map<string, { name: string; values: Map<string, { name: string; count: number }> }>): VoiceFacet[] {
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

/**
 * One page of the catalogue for `query`, with the caller's own voices (`own`, already indexed)
 * searched alongside. A cursor must come from the same query over the same catalogue (and, for
 * `popular`, the same metrics; with own voices, the same own voices): 409 `catalogue_changed`
 * when the catalogue changed since, 400 `invalid_request` (`cursor`) when it is not one of this
 * query's.
 */
export function searchVoices(from: Searchable, query: VoiceQuery, own?: VoiceIndex): VoicePage {
  const { index } = from;
  const fingerprintOfQuery = queryFingerprint(query);
  const ownVersion = own?.size ? own.contentVersion + own.metricsVersion : undefined;
  const metrics = query.sort === "popular" ? index.metricsVersion : undefined;
  let offset = 0;
  if (query.cursor) {
    const c = decodeCursor(query.cursor);
    if (c.q !== fingerprintOfQuery) throw new ApiError("invalid_request", "the cursor belongs to another query: repeat the parameters of the page it came with", { param: "cursor" });
    if (c.v !== index.contentVersion || c.m !== metrics || c.own !== ownVersion) {
      throw new ApiError("catalogue_changed", "the voice catalogue changed since this cursor was made: start again from the first page");
    }
    offset = c.n;
  }
  const mine = own?.size ? own.match(query) : undefined;
  const theirs = index.match(query);
  const total = theirs.hits.length + (mine?.hits.length ?? 0);
  const page = mine ? merged(mine, theirs, query.sort).slice(offset, offset + query.limit) : sliceOf(theirs.hits, offset, query.limit).map((i) => ({ index, i }));
  const more = offset + page.length < total;
  const answer: VoicePage = {
    voices: page.map(({ index: ix, i }) => ix.items[i].entry),
    total_count: total,
    has_more: more,
    next_cursor: more
      ? encodeCursor({ v: index.contentVersion, ...(metrics ? { m: metrics } : {}), ...(ownVersion ? { own: ownVersion } : {}), q: fingerprintOfQuery, n: offset + page.length })
      : null,
    catalogue_updated_at: from.updatedAt.toISOString(),
  };
  if (query.includeFacets) {
    const counts = new Map<string, { name: string; values: Map<string, { name: string; count: number }> }>();
    if (mine) own!.countFacets(mine, counts);
    index.countFacets(theirs, counts);
    answer.facets = facetList(counts);
  }
  return answer;
}
