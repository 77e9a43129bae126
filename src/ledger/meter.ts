import type { Binding } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { ceilCredits, costOf, rateOf } from "./cost.ts";
import type { Ledger } from "./ledger.ts";
import { MeteredRequest } from "./metered-request.ts";
import type { MeterOptions, Payer, Settled } from "./meter-types.ts";
import { hasBudget, type SpendCaps } from "./spend-caps.ts";

// The one entry point that every channel (native TTS and STT, compatibility surfaces, realtime)
// uses to bill a request:
//   admit()  — before any upstream work: drop unpriced bindings (422 when none is left) and those
//              the tenant cannot pay for (402 when none is left). Read-only.
//   start()  — a MeteredRequest that reserves credits ahead of use, in blocks, notes the usage it
//              delivered (the checkpoint a crash is billed from), and settles once.
// Units (seconds of audio, characters of text) are counted and rounded by usage.ts, the one place
// that decides them; every session measures what it delivered through it.
// Holds are taken before a provider is given work, or, on an account far richer than what is in
// flight, written behind while it works (metered-request.ts), so a balance never pays for more
// than it has: it can dip below zero only by the sub-credit carry (< 1 credit), after a fallback
// to a dearer provider by that one request's difference, and, when several processes spend one
// tenant at the same moment, by what holds written behind took (docs/account.md).

export const DEFAULT_METER_OPTIONS: MeterOptions = { blockUnits: { tts: 2000, stt: 60 }, firstUnits: { tts: 200, stt: 10 } };

export class Meter {
  private readonly observers: ((settled: Settled) => void)[] = [];
  /** Keys' and tenants' budgets (docs/limits.md#budgets); none until the server gives them. */
  private caps: SpendCaps | undefined;

  constructor(
    readonly ledger: Ledger,
    private readonly log: Logger,
    private readonly options: MeterOptions = DEFAULT_METER_OPTIONS,
  ) {}

  /**
   * The candidates this payer may use, in order; 422 `model_not_priced` / 402 `insufficient_balance`
   * when none. Each model of a fallback chain (`fallback`: its index in `fallbacks`; none for the
   * primary) must have a price: one that has none is refused, naming it, not skipped in silence.
   */
  async admit<B extends Binding & { fallback?: number }>(payer: Payer, candidates: B[]): Promise<B[]> {
    const unpriced = candidates.find((c) => !candidates.some((b) => b.fallback === c.fallback && b.price));
    if (unpriced) {
      const member = unpriced.fallback === undefined ? undefined : `fallbacks[${unpriced.fallback}].model`;
      if (!member) throw new ApiError("model_not_priced", "this model has no price on any allowed provider");
      throw new ApiError("model_not_priced", `${member}: ${unpriced.canonical} has no price on any allowed provider`, { param: member });
    }
    const priced = candidates.filter((b) => b.price);
    if (priced.length === 0) throw new ApiError("model_not_priced", "this model has no price on any allowed provider");
    let affordable = await this.affordable(payer.tenantId, priced);
    // The funds view errs low (a settle's release counts from its next read): what it turns away is judged again on funds read now.
    if (affordable.length < priced.length) {
      await this.ledger.funds.read(payer.tenantId);
      affordable = await this.affordable(payer.tenantId, priced);
    }
    if (affordable.length === 0) throw new ApiError("insufficient_balance", "the balance cannot pay for this request");
    return this.withinBudget(payer, affordable);
  }

  /** Budgets cap what the payer's requests hold: 429 `budget_exceeded` when what is left of one cannot pay a first unit. */
  private async withinBudget<B extends Binding>(payer: Payer, affordable: B[]): Promise<B[]> {
    const cap = hasBudget(payer.limits) ? this.caps?.capOf(payer) : undefined;
    if (!cap) return affordable;
    await cap.ready();
    const room = cap.room();
    const within = affordable.filter((b) => room >= minimumOf(b));
    if (within.length === 0) throw new ApiError("budget_exceeded", cap.reason());
    return within;
  }

  /** The budgets the payers' requests are held within. */
  capSpend(caps: SpendCaps): void {
    this.caps = caps;
  }

  private async affordable<B extends Binding>(tenantId: string, priced: B[]): Promise<B[]> {
    const affordable: B[] = [];
    for (const b of priced) {
      if ((await this.ledger.spendable(tenantId, b)) >= minimumOf(b)) affordable.push(b);
    }
    return affordable;
  }

  start(id: string, payer: Payer, surface: string): MeteredRequest {
    const cap = hasBudget(payer.limits) ? this.caps?.capOf(payer) : undefined;
    return new MeteredRequest(
      id,
      payer,
      surface,
      this.ledger,
      this.log,
      this.options,
      (settled) => {
        for (const observe of this.observers) observe(settled);
      },
      cap,
    );
  }

  /** Calls `observe` with every request's usage once it is settled. */
  observe(observe: (settled: Settled) => void): void {
    this.observers.push(observe);
  }
}

/** The least a request on `b` can cost: one unit, at least a credit. */
const minimumOf = (b: Binding) => Math.max(1, ceilCredits(costOf(rateOf(b), 1)));
