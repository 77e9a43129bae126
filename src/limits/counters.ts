import type { LiveUse } from "./live-usage.ts";
import type { Limits } from "./types.ts";

/** A tenant or a key, with the limits that apply to it. */
export interface Holder {
  scope: "tenant" | "key";
  id: string;
  limits: Limits;
}

/** What an admission asks for: a request (every admission draws on `requests_per_minute`) and perhaps a session (`max_sessions`). */
export interface Want {
  request: boolean;
  session: boolean;
}

/** An HTTP request (counted once, by the surface's auth). */
export const ONE_REQUEST: Want = { request: true, session: false };
/** A WebSocket's open: a request, and a session while the socket is open. */
export const SESSION_OPEN: Want = { request: true, session: true };
/** An HTTP answer that streams (its request already counted): a session while it streams. */
export const STREAMED_ANSWER: Want = { request: false, session: true };

/** Why an admission was refused, and when trying again may pass. */
export interface Refusal {
  kind: "rate" | "concurrency";
  scope: Holder["scope"];
  retryAfterMs: number;
}

/** A counted session of the holders that limit sessions: where it is counted, under which id. */
export interface LeaseRecord {
  id: string;
  holders: Holder[];
}

/** A place where the counts are kept: this instance's memory, or Redis shared by the fleet. */
export interface Counters {
  /** Checks every holder, then draws on all of them, or on none: a refusal takes nothing. */
  admit(holders: Holder[], want: Want, leaseId: string): Refusal | undefined | Promise<Refusal | undefined>;
  release(lease: LeaseRecord): void | Promise<void>;
  use(scope: Holder["scope"], id: string): LiveUse | Promise<LiveUse>;
}

/** Holders' names in the counters: a tenant's and a key's ids are both UUIDs, kept apart by scope. */
export const holderKey = (scope: Holder["scope"], id: string) => `${scope}:${id}`;

/** The limits that an admission of `want` is checked against (none: nothing to count). */
export function limiting(holder: Holder, want: Want): boolean {
  return (want.request && holder.limits.requests_per_minute !== undefined) || (want.session && holder.limits.max_sessions !== undefined);
}
