import type { Binding } from "../catalogue/types.ts";

// Where credits come from, and in which order a request spends them: eligible promotional grants,
// soonest expiry first (grants without expiry after those with one, older first), then paid credits.

export const PAID = "paid";

/** What a debit is for: a catalogue binding, or one recorded with a hold (crash recovery has no live binding). */
export type BillingTarget = Pick<Binding, "id" | "canonical" | "capability"> & { provider: Pick<Binding["provider"], "id"> };

export interface GrantTarget {
  provider: string;
  model: string;
}

export interface GrantRow {
  id: string;
  name: string;
  remainingCredits: number;
  heldCredits: number;
  targets: string;
  expiresAt: Date | null;
  createdAt: Date;
}

export function parseTargets(json: string): GrantTarget[] {
  return JSON.parse(json) as GrantTarget[];
}

/** A grant limited to targets pays only for those bindings; `model` is a canonical slug, a provider model id or `*`. */
export function grantCovers(targets: GrantTarget[], binding: BillingTarget): boolean {
  if (targets.length === 0) return true;
  return targets.some((t) => t.provider === binding.provider.id && (t.model === "*" || t.model === binding.canonical || t.model === binding.id));
}

export function grantActive(grant: GrantRow, now: Date): boolean {
  return grant.expiresAt === null || grant.expiresAt.getTime() > now.getTime();
}

/** The grants a binding may spend now, in spend order. */
export function eligibleGrants(grants: GrantRow[], binding: BillingTarget, now: Date): GrantRow[] {
  return grants
    .filter((g) => grantActive(g, now) && grantCovers(parseTargets(g.targets), binding))
    .sort(
      (a, b) =>
        (a.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY) - (b.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY) || a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id),
    );
}

export interface Allocation {
  source: string;
  credits: number;
}

/** Takes up to `wanted` credits from the sources in order, each no more than it has available. */
export function allocate(sources: { id: string; available: number }[], wanted: number): Allocation[] {
  const out: Allocation[] = [];
  let left = wanted;
  for (const s of sources) {
    if (left <= 0) break;
    const take = Math.min(left, Math.max(0, s.available));
    if (take > 0) {
      out.push({ source: s.id, credits: take });
      left -= take;
    }
  }
  return out;
}

export const total = (allocations: Allocation[]) => allocations.reduce((n, a) => n + a.credits, 0);

/** Adds allocations source by source. */
export function mergeAllocations(a: Allocation[], b: Allocation[]): Allocation[] {
  const sums = new Map<string, number>();
  for (const x of [...a, ...b]) sums.set(x.source, (sums.get(x.source) ?? 0) + x.credits);
  return [...sums].map(([source, credits]) => ({ source, credits }));
}

/**
 * Which sources pay a debit: first what the request held, in the order it was reserved; then
 * what nobody holds of its eligible sources; and whatever is still owed from paid credits, which
 * may then dip below zero by less than what the holds did not cover (the sub-credit carry at
 * most, when every unit was reserved before use).
 */
export function planDebits(debit: number, held: Allocation[], grants: GrantRow[], paid: { paidCredits: number; paidHeld: number }, binding: BillingTarget, now: Date): Allocation[] {
  // After a fallback, a held grant may not cover the binding that served: its hold is released unused.
  const covering = new Set([PAID, ...grants.filter((g) => grantCovers(parseTargets(g.targets), binding)).map((g) => g.id)]);
  const fromHeld = allocate(
    held.filter((x) => covering.has(x.source)).map((x) => ({ id: x.source, available: x.credits })),
    debit,
  );
  let left = debit - total(fromHeld);
  // Held amounts (this request's included) are not free: what other requests hold stays theirs.
  const free = [...eligibleGrants(grants, binding, now).map((g) => ({ id: g.id, available: g.remainingCredits - g.heldCredits })), { id: PAID, available: paid.paidCredits - paid.paidHeld }];
  const fromFree = left > 0 ? allocate(free, left) : [];
  left -= total(fromFree);
  const owed = left > 0 ? [{ source: PAID, credits: left }] : [];
  return mergeAllocations(mergeAllocations(fromHeld, fromFree), owed);
}
