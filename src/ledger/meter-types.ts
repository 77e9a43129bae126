import type { Binding, Capability } from "../catalogue/types.ts";
import type { PayerBudgets } from "./spend-caps.ts";

// Who pays for a metered request, how far ahead its credits are held, and what its settle tells.

export interface MeterOptions {
  /** How far ahead of use credits are reserved: units (characters or seconds) per block. */
  blockUnits: Record<Capability, number>;
  /** What a session reserves while it connects (`prefetch`): a typical first sentence or stretch of audio. */
  firstUnits: Record<Capability, number>;
}

export interface Payer {
  tenantId: string;
  keyId?: string;
  keyPrefix?: string;
  /** The key's and the tenant's limits (their budgets cap what the payer's requests hold). */
  limits?: PayerBudgets;
}

/** A request's usage as it was settled: for metrics. */
export interface Settled {
  binding: Binding;
  units: number;
  credits: number;
}
