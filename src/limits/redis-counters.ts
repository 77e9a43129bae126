import { RedisClient } from "bun";
import type { Counters, Holder, LeaseRecord, Refusal, Want } from "./counters.ts";
import type { LiveUse } from "./live-usage.ts";
import { CONCURRENCY_RETRY_MS } from "./local-counters.ts";

// The fleet's counts in Redis, each admission one script (one round trip, atomic): per holder a
// token bucket (a hash: tokens, when, capacity) and the sessions in flight (a sorted set of lease
// ids scored by when each lapses). Redis's own clock is the fleet's, so instances need not agree
// on the time. docs/limits.md has the contract.

/** KEYS: per holder its bucket and its sessions. ARGV: lease id, lease TTL (ms), want request (1/0), want session (1/0), then per holder rpm and max (-1: none). */
const ADMIT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease, ttl = ARGV[1], tonumber(ARGV[2])
local wantRequest, wantSession = ARGV[3] == '1', ARGV[4] == '1'
local n = #KEYS / 2
local tokens = {}
for i = 1, n do
  local rpm, max = tonumber(ARGV[3 + 2 * i]), tonumber(ARGV[4 + 2 * i])
  if wantRequest and rpm >= 0 then
    local state = redis.call('HMGET', KEYS[2 * i - 1], 't', 'at')
    local left = tonumber(state[1]) or rpm
    local at = tonumber(state[2]) or now
    left = math.min(rpm, left + (now - at) * rpm / 60000)
    if left < 1 then
      if rpm <= 0 then return {i, 1, 60000} end
      return {i, 1, math.ceil((1 - left) * 60000 / rpm)}
    end
    tokens[i] = left
  end
  if wantSession and max >= 0 then
    redis.call('ZREMRANGEBYSCORE', KEYS[2 * i], '-inf', now)
    if redis.call('ZCARD', KEYS[2 * i]) >= max then return {i, 2, ${CONCURRENCY_RETRY_MS}} end
  end
end
for i = 1, n do
  local rpm, max = tonumber(ARGV[3 + 2 * i]), tonumber(ARGV[4 + 2 * i])
  if tokens[i] then
    redis.call('HSET', KEYS[2 * i - 1], 't', tostring(tokens[i] - 1), 'at', now, 'c', rpm)
    redis.call('PEXPIRE', KEYS[2 * i - 1], 60000)
  end
  if wantSession and max >= 0 then
    redis.call('ZADD', KEYS[2 * i], now + ttl, lease)
    redis.call('PEXPIRE', KEYS[2 * i], 2 * ttl)
  end
end
return {0}
`;

/** KEYS: sessions sets; ARGV: lease TTL (ms), then the lease id of each set. Adds back a lease that lapsed while its session is still open. */
const REFRESH = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now + ttl, ARGV[i + 1])
  redis.call('PEXPIRE', KEYS[i], 2 * ttl)
end
return #KEYS
`;

/** KEYS: bucket, sessions. Returns the sessions not lapsed and the tokens drawn and not yet refilled. */
const USE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local sessions = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local state = redis.call('HMGET', KEYS[1], 't', 'at', 'c')
local drawn = 0
if state[1] then
  local cap = tonumber(state[3])
  drawn = cap - math.min(cap, tonumber(state[1]) + (now - tonumber(state[2])) * cap / 60000)
end
return {sessions, math.floor(drawn + 0.5)}
`;

const SCOPES = [undefined, "rate", "concurrency"] as const;

export class RedisCounters implements Counters {
  private readonly client: RedisClient;

  constructor(
    url: string,
    private readonly leaseTtlMs: number,
    private readonly prefix = "voxroute:limits:",
  ) {
    // No offline queue: while Redis is away a command fails at once, and the limiter counts locally.
    this.client = new RedisClient(url, { enableOfflineQueue: false, autoReconnect: true, connectionTimeout: 2_000 });
  }

  connect(): Promise<void> {
    return this.client.connect();
  }

  close(): void {
    this.client.close();
  }

  async ping(): Promise<void> {
    if (!this.client.connected) await this.client.connect();
    await this.client.send("PING", []);
  }

  async admit(holders: Holder[], want: Want, leaseId: string): Promise<Refusal | undefined> {
    const keys = holders.flatMap((h) => [this.key(h, "rate"), this.key(h, "sessions")]);
    const limits = holders.flatMap((h) => [String(h.limits.requests_per_minute ?? -1), String(h.limits.max_sessions ?? -1)]);
    const args = [ADMIT, String(keys.length), ...keys, leaseId, String(this.leaseTtlMs), want.request ? "1" : "0", want.session ? "1" : "0", ...limits];
    const [index, kind, wait] = (await this.client.send("EVAL", args)) as number[];
    if (!index) return undefined;
    return { kind: SCOPES[kind!]!, scope: holders[index - 1]!.scope, retryAfterMs: wait! };
  }

  /** Every lease still open pushed to now + TTL, in one round trip. */
  async refresh(leases: LeaseRecord[]): Promise<void> {
    const pairs = leases.flatMap((l) => l.holders.filter((h) => h.limits.max_sessions !== undefined).map((h) => [this.key(h, "sessions"), l.id] as const));
    if (pairs.length === 0) return;
    await this.client.send("EVAL", [REFRESH, String(pairs.length), ...pairs.map(([key]) => key), String(this.leaseTtlMs), ...pairs.map(([, id]) => id)]);
  }

  async release(lease: LeaseRecord): Promise<void> {
    const sets = lease.holders.filter((h) => h.limits.max_sessions !== undefined).map((h) => this.key(h, "sessions"));
    await Promise.all(sets.map((set) => this.client.send("ZREM", [set, lease.id])));
  }

  async use(scope: Holder["scope"], id: string): Promise<LiveUse> {
    const holder = { scope, id, limits: {} };
    const [sessions, requests] = (await this.client.send("EVAL", [USE, "2", this.key(holder, "rate"), this.key(holder, "sessions")])) as number[];
    return { sessions: sessions ?? 0, requests_last_minute: requests ?? 0 };
  }

  private key(holder: Holder, what: "rate" | "sessions"): string {
    return `${this.prefix}${holder.scope}:${holder.id}:${what}`;
  }
}
