import { usdOfCredits } from "../ledger/amounts.ts";

/** `1,500,000 credits (1.500000 USD)`: every amount the CLI prints carries its unit. */
export function creditsText(credits: number): string {
  return `${credits.toLocaleString("en-US")} credits (${usdText(credits)})`;
}

/** USD to the credit (1 credit = 0.000001 USD), e.g. `1.500000 USD`. */
export function usdText(credits: number): string {
  return `${usdOfCredits(credits).toFixed(6)} USD`;
}
