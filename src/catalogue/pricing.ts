import { div, mul, parseDecimal, rational, toSignificant, type Rational } from "./price.ts";
import type { Capability, PriceSpec, PriceUnit } from "./types.ts";

/** How many base units (characters or seconds) a published unit holds. */
const UNIT_SIZE: Record<PriceUnit, bigint> = {
  character: 1n,
  "1000 characters": 1000n,
  "1000000 characters": 1_000_000n,
  second: 1n,
  minute: 60n,
  hour: 3600n,
};

const CHARACTER_UNITS: PriceUnit[] = ["character", "1000 characters", "1000000 characters"];

export function unitCapability(unit: PriceUnit): Capability {
  return CHARACTER_UNITS.includes(unit) ? "tts" : "stt";
}

/** Exact USD per base unit: per character (TTS) or per audio second (STT). */
export function usdPerBaseUnit(price: PriceSpec): Rational {
  return div(parseDecimal(price.amount), rational(UNIT_SIZE[price.per]));
}

/** 1 credit = 0.000001 USD: exact credits per character (TTS) or per second (STT). */
export function creditsPerBaseUnit(price: PriceSpec): Rational {
  return mul(usdPerBaseUnit(price), rational(1_000_000n));
}

/** A fixed fee in decimal USD as whole credits, rounded up (a fee never undercharges by a fraction). */
export function creditsOfUsd(usd: string): number {
  const { num, den } = mul(parseDecimal(usd), rational(1_000_000n));
  return Number((num + den - 1n) / den);
}

export interface PricingView {
  currency: "usd";
  unit: "1000 characters" | "minute";
  unitPrice: string;
  requestPrice?: string;
}

/** The catalogue's public pricing: per 1000 characters (TTS) or per minute (STT), 6 significant digits, half-up. */
export function pricingView(capability: Capability, price: PriceSpec): PricingView {
  const perBase = usdPerBaseUnit(price);
  const shown = capability === "tts" ? mul(perBase, rational(1000n)) : mul(perBase, rational(60n));
  const view: PricingView = {
    currency: "usd",
    unit: capability === "tts" ? "1000 characters" : "minute",
    unitPrice: toSignificant(shown, 6),
  };
  if (price.requestPrice !== undefined) view.requestPrice = toSignificant(parseDecimal(price.requestPrice), 6);
  return view;
}
