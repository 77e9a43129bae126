import { isObject } from "../util/is-object.ts";

/**
 * One holder's limits (a tenant's, or a key's inside its tenant's). A member absent means no
 * limit. Stored as JSON in `tenants.limits` and `api_keys.limits` with these snake_case names.
 */
export interface Limits {
  /** WebSocket sessions and streaming HTTP answers in flight at once. */
  max_sessions?: number;
  /** HTTP requests and session opens per minute. */
  requests_per_minute?: number;
  /** Spend caps in USD (a key's budget). */
  usd_per_day?: number;
  usd_per_month?: number;
}

export const LIMIT_NAMES = ["max_sessions", "requests_per_minute", "usd_per_day", "usd_per_month"] as const satisfies readonly (keyof Limits)[];

/** What applies to a request: its tenant's limits and its key's, both enforced. */
export interface PrincipalLimits {
  tenant: Limits;
  key: Limits;
}

// The answer of `GET /account/limits` (`limitsReport`). The dashboard (web/) imports these types,
// and its typecheck has no Bun or Node types: this file imports nothing that needs them.

/** What the report tells of a holder: its limits and what it uses of them. */
export interface HolderUse {
  limits: Limits;
  spent_today_usd: number;
  spent_this_month_usd: number;
  /** From the live counters; absent when they are not running. */
  sessions?: number;
  requests_last_minute?: number;
}

export interface LimitsReport {
  /** The UTC day and month the spend is of. */
  day: string;
  month: string;
  tenant: HolderUse;
  keys: (HolderUse & { id: string; prefix: string })[];
}

export const NO_LIMITS: Readonly<Limits> = Object.freeze({});

/** A stored column read back: null, or JSON that is not an object of non-negative numbers, is no limit (members that are not are dropped). */
export function readLimits(stored: string | null | undefined): Limits {
  if (!stored) return NO_LIMITS;
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return NO_LIMITS;
  }
  if (!isObject(parsed)) return NO_LIMITS;
  const limits: Limits = {};
  for (const name of LIMIT_NAMES) {
    const value = parsed[name];
    if (typeof value === "number" && Number.isFinite(value) && value >= 0) limits[name] = value;
  }
  return limits;
}
