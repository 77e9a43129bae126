import { afterAll, beforeAll, expect, test } from "bun:test";
import { SESSION_OPEN } from "../src/limits/counters.ts";
import { type Lease, Limiter } from "../src/limits/limiter.ts";
import { RedisCounters } from "../src/limits/redis-counters.ts";
import { createLogger } from "../src/log.ts";
import { privateRedis, type PrivateRedis, redisAvailable } from "./helpers/redis.ts";

// Redis that stops answering without losing its data (a frozen server, a network partition), then
// answers again: what the fleet counts afterwards is what is still open (docs/limits.md).

const LEASE_TTL_MS = 6_000;
let redis: PrivateRedis;

beforeAll(async () => {
  if (redisAvailable) redis = await privateRedis();
});
afterAll(async () => {
  redis?.resume();
  await redis?.stop();
});

test.skipIf(!redisAvailable)("sessions that end while Redis does not answer stop counting in it as soon as it answers again, not a lease TTL later", async () => {
  const limiter = new Limiter({ redis: new RedisCounters(redis.url, LEASE_TTL_MS), leaseTtlMs: LEASE_TTL_MS, redisTimeoutMs: 100, failClosed: false, log: createLogger("silent") });
  let down = false;
  let back: () => void = () => {};
  const upAgain = new Promise<void>((resolve) => (back = resolve));
  limiter.observe({ refused: () => {}, redisUp: (answers) => (answers ? down && back() : (down = true)) });
  await limiter.start();
  const who = { tenantId: crypto.randomUUID(), limits: { tenant: { max_sessions: 3 }, key: {} } };
  const leases = [(await limiter.admit(who, SESSION_OPEN)) as Lease, (await limiter.admit(who, SESSION_OPEN)) as Lease];
  expect((await limiter.tenant(who.tenantId)).sessions).toBe(2);

  redis.pause();
  await limiter.tenant(who.tenantId); // unanswered: the limiter counts alone from now on
  expect(down).toBe(true);
  for (const lease of leases) lease.release();
  redis.resume();
  await upAgain;

  const fleet = new RedisCounters(redis.url, LEASE_TTL_MS);
  await fleet.connect();
  try {
    expect((await fleet.use("tenant", who.tenantId)).sessions).toBe(0);
  } finally {
    fleet.close();
    limiter.stop();
  }
});
