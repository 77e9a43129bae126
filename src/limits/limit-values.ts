import type { SqlRunner } from "../db/sql.ts";
import { MAX_CREDIT_USD } from "../ledger/amounts.ts";
import { LIMIT_NAMES, type Limits, readLimits } from "./types.ts";

// Setting limits, one rule for the operator's CLI and a tenant's `POST /account/keys`
// (docs/limits.md#setting-limits): counts are whole numbers, budgets USD to the credit; a key's
// limit may not be above its tenant's of the same name (both apply, the lower wins: a higher one
// on the key would promise what the tenant's forbids).

export type LimitName = (typeof LIMIT_NAMES)[number];
/** A new value for each named limit; null clears it. */
export type LimitChanges = Partial<Record<LimitName, number | null>>;

const COUNTS: readonly LimitName[] = ["max_sessions", "requests_per_minute"];

/** What is wrong with `value` for the limit `name`, or undefined when it is a valid one. */
export function limitProblem(name: LimitName, value: unknown): string | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) return `${name} must be a number at least 0`;
  if (COUNTS.includes(name)) return Number.isInteger(value) && value <= 1_000_000_000 ? undefined : `${name} must be a whole number at most 1000000000`;
  if (value > MAX_CREDIT_USD) return `${name} must be at most ${MAX_CREDIT_USD} USD`;
  return Math.abs(value * 1e6 - Math.round(value * 1e6)) < 1e-6 ? undefined : `${name} is in USD with at most 6 decimals`;
}

/** A valid value as stored: a budget to the credit (0.1 + 0.2 is 0.3, as it is billed), a count as it is. */
export const storedLimit = (value: number) => Math.round(value * 1e6) / 1e6;

/** A limit as typed on a command line: `none` clears it; else its problem is thrown. */
export function limitOfText(name: LimitName, text: string): number | null {
  if (text.trim().toLowerCase() === "none") return null;
  const value = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : NaN;
  const problem = limitProblem(name, value);
  if (problem) throw new Error(`${problem} (or none), got "${text}"`);
  return storedLimit(value);
}

/** The first of the key's limits above its tenant's, if any. */
export function looserThanTenant(key: Limits, tenant: Limits): LimitName | undefined {
  return LIMIT_NAMES.find((name) => key[name] !== undefined && tenant[name] !== undefined && key[name]! > tenant[name]!);
}

export function applyChanges(current: Limits, changes: LimitChanges): Limits {
  const next: Limits = { ...current };
  for (const name of LIMIT_NAMES) {
    if (!(name in changes)) continue;
    const value = changes[name];
    if (value === null || value === undefined) delete next[name];
    else next[name] = value;
  }
  return next;
}

/** The column's text: null for no limits at all. */
export const limitsColumn = (limits: Limits): string | null => (Object.keys(limits).length ? JSON.stringify(limits) : null);

/** A key's limit above its tenant's (as it would be after the change): thrown by `writeLimits`. */
export class LooserThanTenant extends Error {
  constructor(readonly limit: LimitName) {
    super(`a key's ${limit} may not be above its tenant's`);
  }
}

/**
 * Applies `changes` to the tenant's limits, or (with `keyId`) to one of its keys', in one
 * transaction; returns the limits as stored. A key's limit above its tenant's is refused
 * (LooserThanTenant); a tenant's may be lowered below its keys' (its own then applies).
 */
export function writeLimits(sql: SqlRunner, tenantId: string, keyId: string | undefined, changes: LimitChanges): Promise<Limits> {
  return sql.transaction(async (tx) => {
    const [tenant] = await tx.query<{ limits: string | null }>("SELECT limits FROM tenants WHERE id = ?", [tenantId]);
    const tenantLimits = readLimits(tenant?.limits);
    if (!keyId) {
      const next = applyChanges(tenantLimits, changes);
      await tx.query("UPDATE tenants SET limits = ? WHERE id = ?", [limitsColumn(next), tenantId]);
      return next;
    }
    const [key] = await tx.query<{ limits: string | null }>("SELECT limits FROM api_keys WHERE id = ? AND tenant_id = ?", [keyId, tenantId]);
    const next = applyChanges(readLimits(key?.limits), changes);
    const looser = looserThanTenant(next, tenantLimits);
    if (looser) throw new LooserThanTenant(looser);
    await tx.query("UPDATE api_keys SET limits = ? WHERE id = ? AND tenant_id = ?", [limitsColumn(next), keyId, tenantId]);
    return next;
  });
}
