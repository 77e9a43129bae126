import { type Counters, type Holder, holderKey, type LeaseRecord, type Refusal, type Want } from "./counters.ts";
import type { LiveUse } from "./live-usage.ts";

const MINUTE_MS = 60_000;
/** Windows kept before full ones (as good as none) are swept out. */
const KEPT_WINDOWS = 10_000;
/** A session refused for concurrency is told to try again after this long: when a session ends cannot be known. */
export const CONCURRENCY_RETRY_MS = 1_000;

/** A token bucket of `requests_per_minute` tokens, refilled at that rate. */
interface Bucket {
  tokens: number;
  at: number;
  capacity: number;
}

/** `requests_per_minute` as a token bucket: the wait until a token is there, or 0 when one is. */
export function bucketWait(tokens: number, capacity: number): number {
  if (tokens >= 1) return 0;
  return capacity > 0 ? Math.ceil(((1 - tokens) * MINUTE_MS) / capacity) : MINUTE_MS;
}

/**
 * This instance's counts: the only ones without Redis, and with Redis a lower bound of the
 * fleet's (they draw on what this instance was granted), so that what they refuse is refused
 * without asking Redis.
 */
export class LocalCounters implements Counters {
  private readonly buckets = new Map<string, Bucket>();
  private sweepAt = KEPT_WINDOWS;
  private readonly sessions = new Map<string, Set<string>>();
  /** Admissions sent to Redis and not answered yet, per holder. */
  private readonly pending = new Map<string, number>();

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A refusal these counts are sure of (the fleet's can only be higher); with `pending`, admissions under way count as sessions. */
  check(holders: Holder[], want: Want): Refusal | undefined {
    const now = this.now();
    for (const holder of holders) {
      const name = holderKey(holder.scope, holder.id);
      const rpm = holder.limits.requests_per_minute;
      if (want.request && rpm !== undefined) {
        const wait = bucketWait(this.bucket(name, rpm, now).tokens, rpm);
        if (wait > 0) return { kind: "rate", scope: holder.scope, retryAfterMs: wait };
      }
      const max = holder.limits.max_sessions;
      if (want.session && max !== undefined && (this.sessions.get(name)?.size ?? 0) + (this.pending.get(name) ?? 0) >= max) {
        return { kind: "concurrency", scope: holder.scope, retryAfterMs: CONCURRENCY_RETRY_MS };
      }
    }
    return undefined;
  }

  /** Draws on every holder what `want` takes (the admission was granted, here or by Redis). */
  take(holders: Holder[], want: Want, leaseId: string): void {
    const now = this.now();
    for (const holder of holders) {
      const name = holderKey(holder.scope, holder.id);
      const rpm = holder.limits.requests_per_minute;
      if (want.request && rpm !== undefined) this.draw(name, rpm, now);
      if (want.session && holder.limits.max_sessions !== undefined) {
        let held = this.sessions.get(name);
        if (!held) this.sessions.set(name, (held = new Set()));
        held.add(leaseId);
      }
    }
  }

  admit(holders: Holder[], want: Want, leaseId: string): Refusal | undefined {
    const refusal = this.check(holders, want);
    if (!refusal) this.take(holders, want, leaseId);
    return refusal;
  }

  release(lease: LeaseRecord): void {
    for (const holder of lease.holders) {
      const name = holderKey(holder.scope, holder.id);
      const held = this.sessions.get(name);
      held?.delete(lease.id);
      if (held?.size === 0) this.sessions.delete(name);
    }
  }

  /** An admission of the holders' sessions went to Redis (+1) or came back (-1). */
  await(holders: Holder[], step: 1 | -1): void {
    for (const holder of holders) {
      if (holder.limits.max_sessions === undefined) continue;
      const name = holderKey(holder.scope, holder.id);
      const count = (this.pending.get(name) ?? 0) + step;
      if (count > 0) this.pending.set(name, count);
      else this.pending.delete(name);
    }
  }

  use(scope: Holder["scope"], id: string): LiveUse {
    const name = holderKey(scope, id);
    const bucket = this.buckets.get(name);
    const drawn = bucket ? bucket.capacity - this.bucket(name, bucket.capacity, this.now()).tokens : 0;
    return { sessions: this.sessions.get(name)?.size ?? 0, requests_last_minute: Math.max(0, Math.round(drawn)) };
  }

  /** The holder's bucket refilled to `now` (a changed limit takes effect at once, its tokens kept within it); a full one, not kept, for a holder without one. */
  private bucket(name: string, capacity: number, now: number): Bucket {
    const bucket = this.buckets.get(name);
    if (!bucket) return { tokens: capacity, at: now, capacity };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) * capacity) / MINUTE_MS);
    bucket.at = now;
    bucket.capacity = capacity;
    return bucket;
  }

  /** Takes a token from the holder's bucket, kept from then on; past KEPT_WINDOWS kept, the full ones are swept out (a full bucket is as good as none). */
  private draw(name: string, capacity: number, now: number): void {
    const bucket = this.bucket(name, capacity, now);
    bucket.tokens -= 1;
    this.buckets.set(name, bucket);
    if (this.buckets.size <= this.sweepAt) return;
    for (const [other, kept] of this.buckets) if (this.bucket(other, kept.capacity, now).tokens >= kept.capacity) this.buckets.delete(other);
    // Swept again once the map doubles: a sweep's cost is spread over the draws that filled it.
    this.sweepAt = Math.max(KEPT_WINDOWS, 2 * this.buckets.size);
  }
}
