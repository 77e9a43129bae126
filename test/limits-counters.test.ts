import { afterAll, describe, expect, test } from "bun:test";
import { type Counters, type Holder, ONE_REQUEST, SESSION_OPEN } from "../src/limits/counters.ts";
import { LocalCounters } from "../src/limits/local-counters.ts";
import { RedisCounters } from "../src/limits/redis-counters.ts";
import type { Limits } from "../src/limits/types.ts";
import { redisAvailable } from "./helpers/redis.ts";
import { testConfig } from "./helpers/server.ts";

// The two places the counts are kept answer alike (docs/limits.md): a refusal takes nothing from
// any holder, a tenant's window is shared by its keys, a released lease frees its place.

const redis = redisAvailable ? new RedisCounters(process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379", 30_000, `voxroute-test:${crypto.randomUUID()}:`) : undefined;
await redis?.connect();
afterAll(() => redis?.close());

const places: [string, () => Counters | undefined][] = [
  ["this instance's memory", () => new LocalCounters()],
  ["Redis", () => redis],
];

const holder = (scope: Holder["scope"], limits: Limits, id = crypto.randomUUID()): Holder => ({ scope, id, limits });

for (const [name, make] of places) {
  describe.skipIf(!make())(name, () => {
    test("a request the key refuses takes nothing from its tenant's window", async () => {
      const counters = make()!;
      const tenant = holder("tenant", { requests_per_minute: 2 });
      const key = holder("key", { requests_per_minute: 1 });
      expect(await counters.admit([tenant, key], ONE_REQUEST, crypto.randomUUID())).toBeUndefined();
      const refused = await counters.admit([tenant, key], ONE_REQUEST, crypto.randomUUID());
      expect(refused).toMatchObject({ kind: "rate", scope: "key" });
      // One token a minute: the next comes in at most 60 s.
      expect(refused!.retryAfterMs).toBeGreaterThan(50_000);
      expect(refused!.retryAfterMs).toBeLessThanOrEqual(60_000);
      // Another key of the tenant still has the tenant's second token, and then the tenant is spent.
      expect(await counters.admit([tenant, holder("key", {})], ONE_REQUEST, crypto.randomUUID())).toBeUndefined();
      expect(await counters.admit([tenant, holder("key", {})], ONE_REQUEST, crypto.randomUUID())).toMatchObject({ kind: "rate", scope: "tenant" });
    });

    test("sessions: the limit's count held, then a release frees one place", async () => {
      const counters = make()!;
      const tenant = holder("tenant", { max_sessions: 2 });
      const leases = [crypto.randomUUID(), crypto.randomUUID()];
      for (const id of leases) expect(await counters.admit([tenant], SESSION_OPEN, id)).toBeUndefined();
      expect(await counters.admit([tenant], SESSION_OPEN, crypto.randomUUID())).toMatchObject({ kind: "concurrency", scope: "tenant" });
      expect((await counters.use("tenant", tenant.id)).sessions).toBe(2);
      await counters.release({ id: leases[0]!, holders: [tenant] });
      expect(await counters.admit([tenant], SESSION_OPEN, crypto.randomUUID())).toBeUndefined();
    });

    test("a limit of 0 refuses everything", async () => {
      const counters = make()!;
      expect(await counters.admit([holder("key", { requests_per_minute: 0 })], ONE_REQUEST, crypto.randomUUID())).toMatchObject({ kind: "rate", retryAfterMs: 60_000 });
      expect(await counters.admit([holder("key", { max_sessions: 0 })], SESSION_OPEN, crypto.randomUUID())).toMatchObject({ kind: "concurrency" });
    });
  });
}

test("this instance's windows hold for every holder however many were drawn on lately (the map of windows is pruned, not the limits)", () => {
  let now = 0;
  const counters = new LocalCounters(() => now);
  // Many holders drawn on within one minute: their windows are not full, so all of them are kept.
  for (let i = 0; i < 12_000; i++) expect(counters.admit([holder("key", { requests_per_minute: 5 })], ONE_REQUEST, "")).toBeUndefined();
  const limited = holder("key", { requests_per_minute: 1 });
  expect(counters.admit([limited], ONE_REQUEST, "")).toBeUndefined();
  expect(counters.admit([limited], ONE_REQUEST, "")).toMatchObject({ kind: "rate", scope: "key" });
  expect(counters.use("key", limited.id).requests_last_minute).toBe(1);
  // A minute on, every window is full again (the sweep may drop them all); the limit still counts.
  now += 60_000;
  expect(counters.admit([limited], ONE_REQUEST, "")).toBeUndefined();
  expect(counters.admit([limited], ONE_REQUEST, "")).toMatchObject({ kind: "rate", scope: "key" });
});

test("a REDIS_URL that is not a Redis URL stops the start, naming the variable; a Redis URL is taken", () => {
  for (const bad of ["127.0.0.1:6379", "localhost:6379", "http://127.0.0.1:6379", "redis://:@/"]) {
    expect(() => testConfig({ REDIS_URL: bad })).toThrow(`config: REDIS_URL must be a redis:// or rediss:// URL, got "${bad}"`);
  }
  expect(testConfig({ REDIS_URL: "rediss://user:secret@cache.internal:6380/2" }).limitCounters.redisUrl).toBe("rediss://user:secret@cache.internal:6380/2");
});
