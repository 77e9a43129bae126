// A key's budget (and its tenant's, when set) caps the credits its requests may hold: what a
// request may take is the lesser of the account's funds and what is left of the budget. The
// limits room keeps each budget's spend (limits/spend-view.ts); the ledger only asks it.

/** One holder's spend caps in USD, as stored (limits/types.ts names them so). */
export interface Budget {
  usd_per_day?: number;
  usd_per_month?: number;
}

/** The budgets that apply to a payer: its tenant's and its key's. */
export interface PayerBudgets {
  tenant: Budget;
  key: Budget;
}

/** Who a request's budgets are of (a `Payer`). */
export interface BudgetHolder {
  tenantId: string;
  keyId?: string;
  limits?: PayerBudgets;
}

/** One request's view of the budgets over it. */
export interface SpendCap {
  /** Credits the request may still add to its hold. */
  room(): number;
  /** The request's hold changed by `credits` (more, or less when negative). */
  held(credits: number): void;
  /** The request settled `credits`, started at `startedAt` (the UTC day and month it counts in); its hold is gone. */
  spent(credits: number, startedAt: Date): void;
  /** What the refusal says once the room is too small. */
  reason(): string;
  /** Resolves once the spend is read (at once when the view has it). */
  ready(): Promise<void>;
}

export interface SpendCaps {
  /** The cap over a payer's requests (`ready` says when its spend is read); undefined when no budget applies. */
  capOf(payer: BudgetHolder): SpendCap | undefined;
}

/** Whether a payer has any budget at all: the one check a request without one pays. */
export function hasBudget(budgets: PayerBudgets | undefined): budgets is PayerBudgets {
  if (!budgets) return false;
  const { tenant, key } = budgets;
  return key.usd_per_day !== undefined || key.usd_per_month !== undefined || tenant.usd_per_day !== undefined || tenant.usd_per_month !== undefined;
}
