import { asDate, asDateOrNull, asNumber } from "../db/sql.ts";
import type { GrantRow } from "./sources.ts";

// A tenant's balance row and its grants as the ledger's plain SQL reads them.

export interface BalanceRow {
  paidCredits: number;
  paidHeld: number;
  carryNum: number;
  carryDen: number;
  updatedAt: Date;
}

export const BALANCE_COLUMNS = "paid_credits, paid_held, carry_num, carry_den, updated_at";
export const GRANT_COLUMNS = "id, name, remaining_credits, held_credits, targets, expires_at, created_at";

export const balanceOf = (r: Record<string, unknown>): BalanceRow => ({
  paidCredits: asNumber(r.paid_credits),
  paidHeld: asNumber(r.paid_held),
  carryNum: asNumber(r.carry_num),
  carryDen: asNumber(r.carry_den),
  updatedAt: asDate(r.updated_at),
});

export const grantOf = (r: Record<string, unknown>): GrantRow => ({
  id: String(r.id),
  name: String(r.name),
  remainingCredits: asNumber(r.remaining_credits),
  heldCredits: asNumber(r.held_credits),
  targets: String(r.targets),
  expiresAt: asDateOrNull(r.expires_at),
  createdAt: asDate(r.created_at),
});
