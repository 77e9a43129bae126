import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { type Holder, type LeaseRecord, limiting, type Refusal, type Want } from "./counters.ts";
import type { LiveUse, LiveUsage } from "./live-usage.ts";
import { LocalCounters } from "./local-counters.ts";
import type { RedisCounters } from "./redis-counters.ts";
import type { Limits, PrincipalLimits } from "./types.ts";

// `max_sessions` and `requests_per_minute` of a tenant and of its key, both checked at each
// admission (docs/limits.md). Without Redis the counts are this instance's. With Redis they are
// the fleet's: one script per admission, except what this instance's own counts already refuse
// (a lower bound of the fleet's), which costs no round trip. Redis not answering: the instance
// counts on its own (logged once, `voxroute_limits_redis_up` 0), or refuses with LIMITS_FAIL_CLOSED.

/** Who an admission is for: a key's owner, with the limits the key view read. */
export interface Limited {
  tenantId: string;
  keyId?: string;
  limits?: PrincipalLimits;
}

/** A session counted against `max_sessions` until released (idempotent); refreshed in Redis meanwhile. */
export interface Lease {
  readonly id: string;
  release(): void;
  /** Released by itself after `ms` unless `opened` was called by then (a WebSocket whose upgrade never came). */
  releaseUnlessOpened(ms: number): void;
  opened(): void;
}

export interface LimiterOptions {
  redis?: RedisCounters;
  /** A lease not refreshed for this long stops counting (a killed instance's sessions). */
  leaseTtlMs: number;
  /** How long an admission waits for Redis before counting on its own. */
  redisTimeoutMs: number;
  failClosed: boolean;
  log: Logger;
}

/** What the limiter reports to the metrics. */
export interface LimiterObserver {
  refused(refusal: Refusal): void;
  redisUp(up: boolean): void;
}

const NO_OBSERVER: LimiterObserver = { refused: () => {}, redisUp: () => {} };

class TimedOut extends Error {}

const unlimited = (limits: Limits) => limits.requests_per_minute === undefined && limits.max_sessions === undefined;

export class Limiter implements LiveUsage {
  readonly local = new LocalCounters();
  private readonly leases = new Map<string, LeaseRecord>();
  /** Leases that ended while Redis did not answer, and when: taken out of it once it answers (older than the TTL, they have lapsed there already). */
  private readonly unheard = new Map<string, { lease: LeaseRecord; at: number }>();
  private redisUp = true;
  private timer: Timer | undefined;
  private observer = NO_OBSERVER;

  constructor(private readonly options: LimiterOptions) {}

  /** Connects to Redis (when configured) and keeps the leases fresh there every third of their TTL. */
  async start(): Promise<void> {
    const { redis } = this.options;
    if (!redis) return;
    try {
      await this.withinTimeout(redis.connect());
      this.observer.redisUp(true);
    } catch (err) {
      this.markDown(err);
    }
    this.timer = setInterval(() => void this.tick(), Math.max(50, Math.floor(this.options.leaseTtlMs / 3)));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.options.redis?.close();
  }

  observe(observer: LimiterObserver): void {
    this.observer = observer;
    if (this.options.redis) observer.redisUp(this.redisUp);
  }

  /**
   * Admits a request (`session`: one that stays in flight, counted until its lease is released).
   * Nothing to check (no limit of the principal's applies): undefined, at once. A refusal is
   * thrown: 429 `rate_limited` or `concurrency_limited` with `retry_after`.
   */
  admit(who: Limited, want: Want): undefined | Lease | Promise<Lease | undefined> {
    const limits = who.limits;
    if (!limits || (unlimited(limits.tenant) && unlimited(limits.key))) return undefined;
    const holders: Holder[] = [];
    if (!unlimited(limits.tenant)) holders.push({ scope: "tenant", id: who.tenantId, limits: limits.tenant });
    if (who.keyId && !unlimited(limits.key)) holders.push({ scope: "key", id: who.keyId, limits: limits.key });
    const counted = holders.filter((h) => limiting(h, want));
    if (counted.length === 0) return undefined;
    const sure = this.local.check(counted, want);
    if (sure) throw this.refusal(sure);
    // A lease's id; a request alone holds nothing.
    const id = want.session ? crypto.randomUUID() : "";
    const redis = this.options.redis;
    if (!redis || !this.redisUp) return this.admitHere(counted, want, id);
    return this.admitShared(redis, counted, want, id);
  }

  tenant(tenantId: string): Promise<LiveUse> {
    return this.use("tenant", tenantId);
  }

  key(keyId: string): Promise<LiveUse> {
    return this.use("key", keyId);
  }

  private admitHere(holders: Holder[], want: Want, id: string): Lease | undefined {
    if (this.options.redis && this.options.failClosed) throw new ApiError("service_unavailable", "the request counters cannot be reached: retry later", { retry_after: 1 });
    const refusal = this.local.admit(holders, want, id);
    if (refusal) throw this.refusal(refusal);
    return this.lease(holders, want, id);
  }

  private async admitShared(redis: RedisCounters, holders: Holder[], want: Want, id: string): Promise<Lease | undefined> {
    let answer: { refusal: Refusal | undefined } | undefined;
    if (want.session) this.local.await(holders, 1);
    try {
      answer = { refusal: await this.withinTimeout(redis.admit(holders, want, id)) };
    } catch (err) {
      this.markDown(err);
    } finally {
      if (want.session) this.local.await(holders, -1);
    }
    if (!answer) return this.admitHere(holders, want, id);
    const { refusal } = answer;
    if (refusal) throw this.refusal(refusal);
    this.local.take(holders, want, id);
    return this.lease(holders, want, id);
  }

  private lease(holders: Holder[], want: Want, id: string): Lease | undefined {
    if (!want.session) return undefined;
    const sessions = holders.filter((h) => h.limits.max_sessions !== undefined);
    if (sessions.length === 0) return undefined;
    const record = { id, holders: sessions };
    this.leases.set(id, record);
    let unopened: Timer | undefined;
    const release = () => {
      clearTimeout(unopened);
      if (!this.leases.delete(id)) return;
      this.local.release(record);
      const redis = this.options.redis;
      if (!redis) return;
      if (!this.redisUp) return void this.unheard.set(id, { lease: record, at: performance.now() });
      redis.release(record).catch((err) => {
        this.unheard.set(id, { lease: record, at: performance.now() });
        this.markDown(err);
      });
    };
    return {
      id,
      release,
      releaseUnlessOpened: (ms) => {
        unopened = setTimeout(release, ms);
        unopened.unref();
      },
      opened: () => clearTimeout(unopened),
    };
  }

  private refusal(refusal: Refusal): ApiError {
    this.observer.refused(refusal);
    const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
    const extra = { retry_after: seconds, retry_after_ms: refusal.retryAfterMs, limit_scope: refusal.scope };
    if (refusal.kind === "rate") return new ApiError("rate_limited", `the ${refusal.scope}'s requests per minute are used up: retry after ${seconds} s`, extra);
    return new ApiError("concurrency_limited", `the ${refusal.scope}'s sessions are all in flight: retry after ${seconds} s`, extra);
  }

  private async use(scope: Holder["scope"], id: string): Promise<LiveUse> {
    const redis = this.options.redis;
    if (redis && this.redisUp) {
      try {
        return await this.withinTimeout(redis.use(scope, id));
      } catch (err) {
        this.markDown(err);
      }
    }
    return this.local.use(scope, id);
  }

  /** Refreshes the leases in Redis, or, while it is down, asks whether it is back (then the leases counted here alone are added to the fleet's). */
  private async tick(): Promise<void> {
    const redis = this.options.redis!;
    // Those ended over a TTL ago have lapsed in Redis by themselves: however long it is away, the list holds one TTL of ended sessions at most.
    const lapsed = performance.now() - this.options.leaseTtlMs;
    for (const [id, { at }] of this.unheard) if (at < lapsed) this.unheard.delete(id);
    try {
      if (!this.redisUp) await this.withinTimeout(redis.ping());
      await this.withinTimeout(redis.refresh([...this.leases.values()]));
      await this.releaseUnheard(redis);
      if (!this.redisUp) {
        this.redisUp = true;
        this.observer.redisUp(true);
        this.options.log.info("limits: Redis answers again; counts are the fleet's");
      }
    } catch (err) {
      this.markDown(err);
    }
  }

  /** The leases that ended while Redis did not answer, released there now: else they would count until their TTL. */
  private async releaseUnheard(redis: RedisCounters): Promise<void> {
    if (this.unheard.size === 0) return;
    const ended = [...this.unheard.values()].map(({ lease }) => lease);
    await this.withinTimeout(Promise.all(ended.map((lease) => redis.release(lease))));
    for (const lease of ended) this.unheard.delete(lease.id);
  }

  private markDown(err: unknown): void {
    if (!this.redisUp) return;
    this.redisUp = false;
    this.observer.redisUp(false);
    const how = this.options.failClosed ? "limited requests are refused (LIMITS_FAIL_CLOSED)" : "counting on this instance alone";
    this.options.log.error({ err: (err as Error).message }, `limits: Redis does not answer; ${how} until it does`);
  }

  private withinTimeout<T>(work: Promise<T>): Promise<T> {
    let timer: Timer | undefined;
    const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new TimedOut(`no answer from Redis within ${this.options.redisTimeoutMs} ms`)), this.options.redisTimeoutMs)));
    return Promise.race([work, late]).finally(() => clearTimeout(timer));
  }
}
