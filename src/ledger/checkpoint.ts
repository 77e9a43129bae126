import { add, rational, type Rational } from "../catalogue/price.ts";
import type { Binding, Capability } from "../catalogue/types.ts";
import { type CachedUnits, costWithCached, rateOf, usageUnit } from "./cost.ts";
import type { SettleInput, SettlePart } from "./batch-requests.ts";
import { cachedOf } from "./parts.ts";

// What a request's hold row says about it, so that a request whose process died can be settled
// by whichever process finds its hold lapsed: who pays, for which binding at which exact rate,
// and the usage delivered so far. Written with the hold, then updated as usage is delivered
// (hold-keeper.ts); stored as JSON in `holds.checkpoint`.

export interface Checkpoint {
  surface: string;
  keyId?: string;
  /** Epoch ms. */
  startedAt: number;
  provider: string;
  binding: string;
  model: string;
  capability: Capability;
  /** Exact credits per unit and per request, as "num/den". */
  perUnit: string;
  perRequest: string;
  /** Usage delivered so far: characters (TTS) or seconds (STT). */
  units: number;
  /** TTS: of the current binding's units, the characters the router's cache played, billed at its price factor. */
  cached?: CachedUnits;
  /** Epoch ms when `units` was last noted: the latest moment the request is known to have run. */
  at: number;
  /** TTS: the voice the request named, for its activity record. */
  voice?: string;
  /**
   * The bindings that served before the current one (a failover mid-session), each with its
   * exact rate, its own units and (TTS) voice and characters the cache played; `units` above stays
   * the request's running total.
   */
  parts?: CheckpointPart[];
  /** With `parts`: the voice the current binding speaks in. */
  servingVoice?: string;
}

export type CheckpointPart = ReturnType<typeof target> & { units: number; cached?: CachedUnits; voice?: string };

const text = (r: Rational) => `${r.num}/${r.den}`;
const parse = (s: string): Rational => {
  const [num, den] = s.split("/");
  return rational(BigInt(num), BigInt(den));
};

/** The fields that name the binding serving the request, and its exact rate. */
export function target(binding: Binding) {
  const rate = rateOf(binding);
  return {
    provider: binding.provider.id,
    binding: binding.id,
    model: binding.canonical,
    capability: binding.capability,
    perUnit: text(rate.perUnit),
    perRequest: text(rate.perRequest),
  };
}

export function newCheckpoint(surface: string, keyId: string | undefined, startedAt: number, binding: Binding): Checkpoint {
  return { surface, keyId, startedAt, ...target(binding), units: 0, at: startedAt };
}

/** Points the checkpoint at the binding that serves the request (after a fallback, another one). */
export function retarget(cp: Checkpoint, binding: Binding): void {
  if (cp.provider !== binding.provider.id || cp.binding !== binding.id) Object.assign(cp, target(binding));
}

/**
 * The settle of a request recovered from its checkpoint: status `interrupted` (its outcome
 * `shutdown`: the server stopped under it, with no grace period), the delivered
 * units at the recorded rate (nothing, not even a per-request price, when nothing was delivered),
 * finished when its usage was last noted.
 */
export function recoveredSettle(id: string, tenantId: string, json: string): SettleInput {
  const cp = JSON.parse(json) as Checkpoint;
  const target = billingTarget(cp);
  const parts = cp.parts?.length ? recoveredParts(cp) : undefined;
  const units = parts ? parts.reduce((n, p) => n + p.units, 0) : cp.units;
  const cachedUnits = parts ? cachedOf(parts) : cp.cached && Math.min(cp.units, cp.cached.units);
  return {
    id,
    tenantId,
    keyId: cp.keyId,
    surface: cp.surface,
    binding: target,
    status: "interrupted",
    outcome: "shutdown",
    usageUnit: usageUnit(target),
    units,
    cost: parts ? parts.reduce((c, p) => add(c, p.cost), rational(0n)) : costAt(cp, cp.units),
    startedAt: new Date(cp.startedAt),
    finishedAt: new Date(cp.at),
    latencyMs: cp.at - cp.startedAt,
    attempts: [],
    ...(cp.voice ? { voice: cp.voice } : {}),
    ...(parts ? { parts } : {}),
    ...(cachedUnits ? { cachedUnits } : {}),
  };
}

const billingTarget = (t: CheckpointPart) => ({ provider: { id: t.provider }, id: t.binding, canonical: t.model, capability: t.capability });
/** The units at a recorded rate (those the cache played at its factor): nothing, not even a per-request price, for none. */
const costAt = (t: CheckpointPart, units: number) => (units > 0 ? costWithCached({ perUnit: parse(t.perUnit), perRequest: parse(t.perRequest) }, units, t.cached) : rational(0n));

/** The closed parts, then the current binding's: the running total past them. */
function recoveredParts(cp: Checkpoint): SettlePart[] {
  const closed = cp.parts!;
  const rest = cp.units - closed.reduce((n, p) => n + p.units, 0);
  return [...closed, ...(rest > 0 ? [{ ...cp, units: rest, voice: cp.servingVoice }] : [])].map((p) => ({
    binding: billingTarget(p),
    units: p.units,
    cost: costAt(p, p.units),
    ...(p.cached ? { cached: p.cached } : {}),
    ...(p.voice ? { voice: p.voice } : {}),
  }));
}
