import { parseDecimal } from "../catalogue/price.ts";

export const CREDITS_PER_USD = 1_000_000;

/**
 * The most USD one operator command may credit (docs/account.md#operator-cli): far beyond any real
 * top-up, and far below where balances stop being exact integers (2^53 credits, 9 billion USD).
 */
export const MAX_CREDIT_USD = 1_000_000;

/** Whole credits for a USD decimal string; amounts finer than a credit (6 decimals) are refused. */
export function creditsOfUsd(usd: string): number {
  const r = parseDecimal(usd);
  const scaled = r.num * BigInt(CREDITS_PER_USD);
  if (scaled % r.den !== 0n) throw new Error(`${usd} USD is not a whole number of credits (at most 6 decimals)`);
  return Number(scaled / r.den);
}

export const usdOfCredits = (credits: number) => credits / CREDITS_PER_USD;
