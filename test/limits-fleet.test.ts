import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { openDatabase } from "../src/db/open.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { TEST_MODEL } from "./fakes/fixed-pcm-provider.ts";
import { createKey } from "./helpers/accounts.ts";
import { setTenantLimits } from "./helpers/limits.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { killServer, spawnServer, type ServerProcess } from "./helpers/process.ts";
import { privateRedis, type PrivateRedis, redisAvailable } from "./helpers/redis.ts";
import { upgradeRequest } from "./helpers/upgrade-request.ts";
import { bearer, connect } from "./helpers/ws-client.ts";
import type { Limits } from "../src/limits/types.ts";

// Instances on one PostgreSQL and one Redis (a private redis-server, so that it can be stopped):
// max_sessions counted across the fleet, a killed instance's leases lapsing after the lease TTL,
// and Redis stopping mid-run (docs/limits.md).

const LEASE_TTL_MS = 3_000;
let redis: PrivateRedis;
let databaseUrl: string;
let drop: (() => Promise<void>) | undefined;
const started: ServerProcess[] = [];

const start = async (env: Record<string, string> = {}) => {
  const server = await spawnServer({ DATABASE_URL: databaseUrl, REDIS_URL: redis.url, LIMITS_LEASE_TTL_MS: String(LEASE_TTL_MS), TTS_WORKERS: "1", ...env });
  started.push(server);
  return server;
};

beforeAll(async () => {
  if (!postgresAvailable || !redisAvailable) return;
  redis = await privateRedis();
  const fresh = await freshPostgres();
  databaseUrl = fresh.url;
  drop = fresh.drop;
});
afterAll(async () => {
  for (const s of started) s.proc.kill("SIGKILL");
  await redis?.stop();
  await drop?.();
});

/** A funded tenant with these limits, and its key. */
async function tenantWith(limits: Limits): Promise<string> {
  const database = await openDatabase(databaseUrl);
  try {
    const { key, tenantId } = await createKey(database, `fleet-limits-${crypto.randomUUID()}`);
    await new Ledger(database).credit(tenantId, { credits: 10_000_000, type: "adjustment", description: "test" });
    await setTenantLimits(database, tenantId, limits);
    return key;
  } finally {
    await database.close();
  }
}

const ttsOn = (server: ServerProcess) => server.wsUrl(`/v1/tts?model=${encodeURIComponent(TEST_MODEL)}`);

async function hold(server: ServerProcess, key: string) {
  const client = connect(ttsOn(server), bearer(key));
  await client.opened;
  return client;
}

const upgradeStatus = async (server: ServerProcess, key: string) => (await upgradeRequest(ttsOn(server), bearer(key))).status;

const metric = async (server: ServerProcess, name: string) => new RegExp(`^${name} (\\S+)$`, "m").exec(await (await fetch(`${server.url}/metrics`)).text())?.[1];

/** Polls `check` (bounded): what it last answered. */
async function eventually<T>(check: () => Promise<T>, done: (value: T) => boolean, tries = 100): Promise<T> {
  let value = await check();
  for (let i = 0; i < tries && !done(value); i++) {
    await Bun.sleep(100);
    value = await check();
  }
  return value;
}

describe.skipIf(!postgresAvailable || !redisAvailable)("limits across instances sharing Redis", () => {
  test("a tenant limited to 3 sessions: 2 held on one instance and 1 on the other, the fourth is refused on either; a close frees a place for both", async () => {
    const [a, b] = await Promise.all([start(), start()]);
    const key = await tenantWith({ max_sessions: 3 });
    const held = [await hold(a!, key), await hold(a!, key), await hold(b!, key)];
    expect(await upgradeStatus(b!, key)).toBe(429);
    expect(await upgradeStatus(a!, key)).toBe(429);
    held[0]!.ws.close();
    await held[0]!.closed;
    // The close's release reaches Redis a moment after the socket is gone.
    expect(
      await eventually(
        () => upgradeStatus(b!, key),
        (s) => s === 101,
      ),
    ).toBe(101);
    for (const h of held) h.ws.close();
  });

  test("kill -9 of an instance holding sessions: they count until their leases lapse (LIMITS_LEASE_TTL_MS), then no more", async () => {
    const [victim, survivor] = [await start(), started[0]!];
    const key = await tenantWith({ max_sessions: 2 });
    await hold(victim, key);
    await hold(victim, key);
    expect(await upgradeStatus(survivor, key)).toBe(429);
    await killServer(victim);
    // Within the TTL the dead instance's sessions still count.
    expect(await upgradeStatus(survivor, key)).toBe(429);
    expect(
      await eventually(
        () => upgradeStatus(survivor, key),
        (s) => s === 101,
      ),
    ).toBe(101);
  });

  test("Redis stopped mid-run: the instance counts on its own (voxroute_limits_redis_up 0); with LIMITS_FAIL_CLOSED it refuses; Redis back, the fleet's counts again", async () => {
    const [open, closed] = [started[0]!, await start({ LIMITS_FAIL_CLOSED: "true" })];
    const key = await tenantWith({ max_sessions: 1 });
    expect(await metric(open, "voxroute_limits_redis_up")).toBe("1");
    await redis.stop();
    const held = await hold(open, key);
    expect(await upgradeStatus(open, key)).toBe(429);
    expect(await metric(open, "voxroute_limits_redis_up")).toBe("0");
    const refused = await upgradeRequest(ttsOn(closed), bearer(key));
    expect(refused.status).toBe(503);
    // A key with no limits is served all the same.
    const unlimited = await tenantWith({});
    expect(await upgradeStatus(closed, unlimited)).toBe(101);
    await redis.start();
    expect(
      await eventually(
        () => metric(open, "voxroute_limits_redis_up"),
        (v) => v === "1",
      ),
    ).toBe("1");
    // The session counted alone while Redis was away is the fleet's again: the other instance refuses a second.
    expect(
      await eventually(
        () => upgradeStatus(closed, key),
        (s) => s === 429,
      ),
    ).toBe(429);
    held.ws.close();
  });
});
