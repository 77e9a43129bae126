import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeLimits } from "../src/limits/limit-values.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { createKey } from "./helpers/accounts.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// A key's budget on two instances of one PostgreSQL: what one spends, the other sees from the
// ledger at its next read of the key's spend (every ACCESS_CHECK_INTERVAL_MS), and refuses the key
// from then on (docs/limits.md#budgets). TEST_MODEL costs 10 credits a character.

const servers: TestServer[] = [];
let drop: (() => Promise<void>) | undefined;

beforeAll(async () => {
  if (!postgresAvailable) return;
  const fresh = await freshPostgres();
  drop = fresh.drop;
  for (let i = 0; i < 2; i++) {
    servers.push(
      await startTestServer({ DATABASE_URL: fresh.url, ACCESS_CHECK_INTERVAL_MS: "200" }, { extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed", 2)] } }),
    );
  }
});
afterAll(async () => {
  for (const s of servers) await s.stop(0);
  await drop?.();
});

async function upgrade(server: TestServer, key: string) {
  const res = await fetch(`${server.url}/v1/tts?model=${TEST_MODEL}`, {
    headers: { ...bearer(key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
  });
  await res.body?.cancel();
  return res.status;
}

describe.skipIf(!postgresAvailable)("a key's budget on two instances", () => {
  test("spent through one instance, it is refused by the other once that one reads the spend again; the ledger holds exactly what was spent", async () => {
    const [a, b] = servers as [TestServer, TestServer];
    const { key, keyId, tenantId } = await createKey(a.ctx.database, `fleet-budget-${crypto.randomUUID()}`);
    await a.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    await writeLimits(a.ctx.database.sql, tenantId, keyId, { usd_per_day: 0.000301 }); // 30 characters and the carry allowance
    // B reads the key and its spend (nothing yet) before A spends.
    expect(await upgrade(b, key)).toBe(101);

    const c = connect(a.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
    c.send({ type: "text", text: "x".repeat(30) });
    c.send({ type: "close" });
    expect((await c.closed).close.code).toBe(1000);
    expect(await upgrade(a, key)).toBe(429); // A counts its own settle at once

    let refused = false;
    for (let i = 0; i < 100 && !refused; i++) {
      await b.ctx.keys.nextCheck(); // an access-check interval has passed on B
      refused = (await upgrade(b, key)) === 429;
    }
    expect(refused).toBe(true);
    const [{ credits }] = await a.ctx.database.sql.query<{ credits: unknown }>("SELECT sum(credits) AS credits FROM activity WHERE tenant_id = ?", [tenantId]);
    expect(Number(credits)).toBe(300);
  });
});
