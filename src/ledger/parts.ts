import { add, rational, type Rational } from "../catalogue/price.ts";
import type { Binding } from "../catalogue/types.ts";
import type { SettlePart } from "./batch-requests.ts";
import { type CachedUnits, costOf, costWithCached, rateOf } from "./cost.ts";
import type { Allocation } from "./sources.ts";

// A request served in turn by several bindings (a failover in the middle of a session) is billed
// in parts: each binding's share of the units at that binding's rate, in one settle and one
// activity record (docs/routing.md, "Billing in parts"). Units are the request's running total
// throughout (what `cover`, `delivered` and `settle` are given); a part closes at the total it
// reached when the next binding took over, and the last part is what the total went on to.
// TTS: so is the count of characters the cache played (`CachedUnits`, the session's running total):
// each part is billed its own cached characters at the price factor, as a request of one part is.

/** A closed part: `binding` served the request's units from the previous part's end up to `upTo`. */
interface ClosedPart {
  binding: Binding;
  upTo: number;
  /** Of this part's own units, those the cache played. */
  cached?: CachedUnits;
  voice?: string;
}

/** An activity record's `parts` entry (JSON): one per binding that served, in order. */
export interface PartRecord {
  provider: string;
  model: string;
  units: number;
  credits: number;
  voice?: string;
  cached_units?: number;
}

export class ServedParts {
  private readonly closed: ClosedPart[] = [];
  /** Exact credits of the closed parts at their full rate (what the hold covers: cached characters too). */
  private closedCost: Rational = rational(0n);
  /** The cache's running total of characters played when the latest binding handed over. */
  private cachedUpTo = 0;
  /** TTS: the voice speaking now (after a failover, the next binding's). */
  voice: string | undefined;

  /** Units the closed parts cover (the request's total when the current binding took over). */
  get units(): number {
    return this.closed.at(-1)?.upTo ?? 0;
  }

  get any(): boolean {
    return this.closed.length > 0;
  }

  /**
   * `binding` served up to `upTo` in total, `cached` (a running total too) played by the cache, then
   * the next one speaks `nextVoice`; a part of no units is not one (the binding failed before serving any).
   */
  close(binding: Binding, upTo: number, nextVoice: string | undefined, cached?: CachedUnits): void {
    const units = upTo - this.units;
    const { voice } = this;
    this.voice = nextVoice ?? voice;
    const own = this.cachedSince(units, cached);
    if (cached) this.cachedUpTo = cached.units;
    if (units <= 0) return;
    this.closed.push({ binding, upTo, ...(own ? { cached: own } : {}), ...(voice ? { voice } : {}) });
    this.closedCost = add(this.closedCost, costOf(rateOf(binding), units));
  }

  /** Exact credits of `total` units with the rest (past the closed parts) on `binding`. */
  cost(binding: Binding, total: number): Rational {
    const rest = costOf(rateOf(binding), Math.max(0, total - this.units));
    return this.any ? add(this.closedCost, rest) : rest;
  }

  /**
   * The settle's parts once a part was closed (the last one `binding` with the units after the
   * closed parts, if any, and the cached characters of `cached`, the total, past theirs); undefined otherwise.
   */
  settleParts(binding: Binding, total: number, cached?: CachedUnits): (SettlePart & { binding: Binding })[] | undefined {
    const { voice } = this;
    if (!this.any) return undefined;
    const parts: (SettlePart & { binding: Binding })[] = this.checkpointParts((b) => ({ binding: b })).map((p) => ({ ...p, cost: costWithCached(rateOf(p.binding), p.units, p.cached) }));
    const rest = total - this.units;
    const own = this.cachedSince(rest, cached);
    if (rest > 0) parts.push({ binding, units: rest, cost: costWithCached(rateOf(binding), rest, own), ...(own ? { cached: own } : {}), ...(voice ? { voice } : {}) });
    return parts;
  }

  /** The closed parts as a checkpoint keeps them: each binding's exact rate, units and cached characters. */
  checkpointParts<T>(target: (binding: Binding) => T): (T & { units: number; cached?: CachedUnits; voice?: string })[] {
    let from = 0;
    return this.closed.map((p) => {
      const units = p.upTo - from;
      from = p.upTo;
      return { ...target(p.binding), units, ...(p.cached ? { cached: p.cached } : {}), ...(p.voice ? { voice: p.voice } : {}) };
    });
  }

  /** Of the current binding's part of `total` units (past the closed parts), the characters the cache played (`cached`: the running total); undefined when none. */
  currentCached(total: number, cached: CachedUnits | undefined): CachedUnits | undefined {
    return this.cachedSince(total - this.units, cached);
  }

  /** Of a part of `units`, the characters the cache played since the latest hand-over (`cached` the running total); undefined when none. */
  private cachedSince(units: number, cached: CachedUnits | undefined): CachedUnits | undefined {
    const own = Math.min(units, (cached?.units ?? 0) - this.cachedUpTo);
    return own > 0 ? { units: own, factor: cached!.factor } : undefined;
  }
}

/** The activity record's `parts` column. */
export function partsRecord(parts: SettlePart[], credits: number[]): string {
  const record: PartRecord[] = parts.map((p, i) => ({
    provider: p.binding.provider.id,
    model: p.binding.canonical,
    units: p.units,
    credits: credits[i],
    ...(p.voice ? { voice: p.voice } : {}),
    ...(p.cached ? { cached_units: p.cached.units } : {}),
  }));
  return JSON.stringify(record);
}

/** Characters of the parts the cache played: the activity record's `cached_units`. */
export function cachedOf(parts: SettlePart[]): number {
  return parts.reduce((n, p) => n + (p.cached?.units ?? 0), 0);
}

/** A debit paid from what the request held leaves that much less held for its next part. */
export function spendHeld(held: Allocation[], debit: Allocation): void {
  const h = held.find((x) => x.source === debit.source);
  if (h) h.credits = Math.max(0, h.credits - debit.credits);
}
