import { parseDecimal, rational, type Rational } from "../catalogue/price.ts";
import { creditsPerBaseUnit } from "../catalogue/pricing.ts";
import type { Binding, Capability } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";

// What a request costs, exactly, in credits (1 credit = 0.000001 USD): the binding's rate per
// character (TTS) or per audio second (STT) times the units, plus its per-request price once.

export interface Rate {
  perUnit: Rational;
  perRequest: Rational;
}

/** Rates are fixed per binding: computed once (it is on the per-frame path). */
const rates = new WeakMap<Binding, Rate>();

export function rateOf(binding: Binding): Rate {
  let rate = rates.get(binding);
  if (rate) return rate;
  if (!binding.price) throw new ApiError("model_not_priced", `${binding.provider.id}/${binding.id} has no price`);
  const perRequest = binding.price.requestPrice ? parseDecimal(binding.price.requestPrice) : rational(0n);
  rate = { perUnit: creditsPerBaseUnit(binding.price), perRequest: rational(perRequest.num * 1_000_000n, perRequest.den) };
  rates.set(binding, rate);
  return rate;
}

/** Exact credits for `units` characters or seconds of one request. */
export function costOf(rate: Rate, units: number): Rational {
  const u = BigInt(units);
  return rational(rate.perUnit.num * u * rate.perRequest.den + rate.perRequest.num * rate.perUnit.den, rate.perUnit.den * rate.perRequest.den);
}

/** The smallest whole number of credits that covers an exact amount. */
export function ceilCredits(r: Rational): number {
  return Number((r.num + r.den - 1n) / r.den);
}

export function usageUnit(target: { capability: Capability }): "characters" | "seconds" {
  return target.capability === "tts" ? "characters" : "seconds";
}
