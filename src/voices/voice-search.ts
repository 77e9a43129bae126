import { ApiError } from "../errors.ts";
import { type FacetCounts, facetList } from "./voice-facets.ts";
import type { Match, VoiceIndex } from "./voice-index.ts";
import { featured, ORDERS } from "./voice-order.ts";
import type { VoicePage, VoiceQuery, VoiceSort } from "./voice-query.ts";

// Answering a query: one page of the catalogue's index merged with the caller's own voices, its
// facet counts, and the cursor to the next page.

/** Hash of a string, as a short base-36 text (query fingerprints). */
const fingerprint = (text: string) => Bun.hash(text).toString(36);

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
    const counts: FacetCounts = new Map();
    if (mine) own!.countFacets(mine, counts);
    index.countFacets(theirs, counts);
    answer.facets = facetList(counts);
  }
  return answer;
}
