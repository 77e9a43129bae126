import type { Rational } from "../catalogue/price.ts";
import type { Outcome } from "./activity.ts";
import type { CachedUnits } from "./cost.ts";
import type { BillingTarget } from "./sources.ts";

// What the ledger's batcher (batch.ts) is asked to do, and what it answers.

export interface SettleInput {
  /** The request id: the activity record's id and its hold's id. Settling twice is a no-op. */
  id: string;
  tenantId: string;
  keyId?: string;
  surface: string;
  binding: BillingTarget;
  /** `interrupted`: recovered from the hold's checkpoint after its process died. */
  status: "completed" | "failed" | "interrupted";
  outcome: Outcome;
  usageUnit: "characters" | "seconds";
  units: number;
  /** Exact credits the usage costs. */
  cost: Rational;
  startedAt: Date;
  finishedAt: Date;
  latencyMs: number;
  attempts: { provider: string; reason: string }[];
  /** TTS: the voice the request named. */
  voice?: string;
  /**
   * When more than one binding served the request (a failover mid-session): each one's share, in
   * order; `binding`, `units` and `cost` above are then the last part's binding and the totals.
   */
  parts?: SettlePart[];
  /** TTS: characters of `units` played from the TTS cache. */
  cachedUnits?: number;
}

/** The usage one binding served, at its own rate. */
export interface SettlePart {
  binding: BillingTarget;
  units: number;
  /** Exact credits these units cost at the binding's rate (its per-request price included). */
  cost: Rational;
  /** TTS: the voice that spoke this part. */
  voice?: string;
  /** TTS: of `units`, those the cache played (`cost` bills them at the price factor). */
  cached?: CachedUnits;
}

export interface ActivityRow {
  id: string;
  credits: number;
  status: string;
  /** With `SettleInput.parts`: the credits each part was debited, in order. */
  partCredits?: number[];
}

export interface ReserveInput {
  holdId: string;
  tenantId: string;
  binding: BillingTarget;
  /** Credits the request needs now: all of them, or none. */
  minimum: number;
  /** Credits it would like to hold ahead, at most a share of what else is free (batch.ts's AHEAD_SHARE). */
  ahead: number;
  /** The request's checkpoint (`Checkpoint`), stored as its JSON when this reserve creates the hold: as it is when the batch runs. */
  checkpoint: object;
}

export interface RecoverInput {
  holdId: string;
  tenantId: string;
  /** Recover only if the hold still expired before this: a refresh since then means it is alive. */
  lapsedBefore: Date;
}

/**
 * `recovered`: settled from its checkpoint; `released`: released unbilled (already recorded, or
 * no checkpoint to bill from); `skipped`: gone or refreshed meanwhile (another process got it).
 */
export type Recovery = "recovered" | "released" | "skipped";
