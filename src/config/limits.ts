import { decimal, type Env, flag, integer } from "./env.ts";

// The settings of tenants' limits (docs/limits.md): what a new tenant gets, and where the
// counters are kept.

export interface DefaultTenantLimits {
  max_sessions?: number;
  requests_per_minute?: number;
  usd_per_day?: number;
  usd_per_month?: number;
}

export interface LimitCountersConfig {
  /** redis:// or rediss:// URL of the counters shared by every instance; unset: each instance counts its own. */
  redisUrl?: string;
  /** A session's lease lapses this long after its last refresh (refreshed every third of it): a killed instance's sessions stop counting by then. */
  leaseTtlMs: number;
  /** How long an admission waits for Redis before counting on this instance alone. */
  redisTimeoutMs: number;
  /** With Redis not answering, refuse requests that have limits (503) instead of counting per instance. */
  failClosed: boolean;
}

/** The schemes Bun's Redis client takes; anything else (a bare host:port, http://) would fail the start deep in the client or count alone forever. */
const REDIS_SCHEMES = ["redis:", "rediss:", "valkey:", "valkeys:", "redis+tls:", "redis+unix:", "redis+tls+unix:"];

function redisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL;
  if (!raw) return undefined;
  if (!REDIS_SCHEMES.includes(URL.parse(raw)?.protocol ?? "")) throw new Error(`config: REDIS_URL must be a redis:// or rediss:// URL, got "${raw}"`);
  return raw;
}

export function defaultTenantLimits(env: Env): DefaultTenantLimits {
  const set = (name: string) => env[name] !== undefined && env[name] !== "";
  return {
    ...(set("DEFAULT_TENANT_MAX_SESSIONS") ? { max_sessions: integer(env, "DEFAULT_TENANT_MAX_SESSIONS", 0) } : {}),
    ...(set("DEFAULT_TENANT_REQUESTS_PER_MINUTE") ? { requests_per_minute: integer(env, "DEFAULT_TENANT_REQUESTS_PER_MINUTE", 0) } : {}),
    ...(set("DEFAULT_TENANT_USD_PER_DAY") ? { usd_per_day: Number(decimal(env, "DEFAULT_TENANT_USD_PER_DAY", "0")) } : {}),
    ...(set("DEFAULT_TENANT_USD_PER_MONTH") ? { usd_per_month: Number(decimal(env, "DEFAULT_TENANT_USD_PER_MONTH", "0")) } : {}),
  };
}

export function limitCounters(env: Env): LimitCountersConfig {
  return {
    redisUrl: redisUrl(env),
    leaseTtlMs: integer(env, "LIMITS_LEASE_TTL_MS", 30_000, 300),
    redisTimeoutMs: integer(env, "LIMITS_REDIS_TIMEOUT_MS", 250, 1),
    failClosed: flag(env, "LIMITS_FAIL_CLOSED"),
  };
}
