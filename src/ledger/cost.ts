import { add, mul, parseDecimal, rational, type Rational } from "../catalogue/price.ts";
import { creditsPerBaseUnit } from "../catalogue/pricing.ts";
import type { Binding, Capability, PriceSpec } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";

// What a request costs, exactly, in credits (1 credit = 0.000001 USD): the binding's rate per
// character (TTS) or per audio second (STT) times the units, plus its per-request price once.

export interface Rate {
  perUnit: Rational;
  perRequest: Rational;
}

/**
 * Rates are fixed per price: computed once (it is on the per-frame path). Keyed by the catalogue's
 * price, not the binding: a request's candidates are copies of the catalogue's bindings (with
 * their voice), new for every session, and each would parse its decimal price again.
 */
const rates = new WeakMap<PriceSpec, Rate>();

export function rateOf(binding: Binding): Rate {
  const { price } = binding;
  if (!price) throw new ApiError("model_not_priced", `${binding.provider.id}/${binding.id} has no price`);
  let rate = rates.get(price);
  if (rate) return rate;
  const perRequest = price.requestPrice ? parseDecimal(price.requestPrice) : rational(0n);
  rate = { perUnit: creditsPerBaseUnit(price), perRequest: rational(perRequest.num * 1_000_000n, perRequest.den) };
  rates.set(price, rate);
  return rate;
}

/** Exact credits for `units` characters or seconds of one request. */
export function costOf(rate: Rate, units: number): Rational {
  const u = BigInt(units);
  return rational(rate.perUnit.num * u * rate.perRequest.den + rate.perRequest.num * rate.perUnit.den, rate.perUnit.den * rate.perRequest.den);
}

/** TTS: characters played from the TTS cache, billed at the model's price times `factor` (a decimal string). */
export interface CachedUnits {
  units: number;
  factor: string;
}

/**
 * The cost of `units` at `rate`, `cached` of them at the per-unit price times their factor; the
 * per-request price is paid once, in full, however many the cache played.
 */
export function costWithCached(rate: Rate, units: number, cached: CachedUnits | undefined): Rational {
  const hits = Math.min(units, cached?.units ?? 0);
  if (!hits) return costOf(rate, units);
  return add(costOf(rate, units - hits), mul(mul(rate.perUnit, rational(BigInt(hits))), parseDecimal(cached!.factor)));
}

/** The smallest whole number of credits that covers an exact amount. */
export function ceilCredits(r: Rational): number {
  return Number((r.num + r.den - 1n) / r.den);
}

export function usageUnit(target: { capability: Capability }): "characters" | "seconds" {
  return target.capability === "tts" ? "characters" : "seconds";
}
