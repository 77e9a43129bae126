import type { SpendCap } from "./spend-caps.ts";

// The credits one request holds, counted against the budgets over its payer (docs/limits.md#budgets):
// what its hold may grow by is within their room, and the budgets learn of every change to it.

export class HeldCredits {
  /** Credits held so far (the hold row in the database says from which sources). */
  amount = 0;
  /** Why more was refused by a budget, not the balance: the session ends `budget_exceeded`. */
  refusedBy: string | undefined;

  constructor(private readonly cap?: SpendCap) {}

  /** The hold grew (or shrank) by `credits`: the budget's view counts them as held by the payer. */
  add(credits: number): void {
    this.amount += credits;
    this.cap?.held(credits);
  }

  /** What the budgets over the payer leave for the hold to grow by. */
  room(): number {
    return this.cap ? this.cap.room() : Infinity;
  }

  /** Whether the budgets leave `credits` more to hold; noted when they do not. */
  allow(credits: number): boolean {
    if (credits <= this.room()) return true;
    this.refusedBy = this.cap!.reason();
    return false;
  }

  /** The request settled `credits`, started at `startedAt`: the budgets count them as spent, and nothing is held any more. */
  spent(credits: number, startedAt: Date): void {
    this.cap?.spent(credits, startedAt);
    this.release();
  }

  /** Nothing is held any more. */
  release(): void {
    this.add(-this.amount);
  }
}
