import { afterAll, beforeAll, expect, test } from "bun:test";
import { desc, eq } from "drizzle-orm";
import { writeLimits } from "../src/limits/limit-values.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { createKey } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// A budget changed while its key's sessions are open applies to them from the next read of the
// spend (an access-check interval, short here), not only to the sessions opened after it
// (docs/limits.md#budgets). TEST_MODEL costs 10 credits per character.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ ACCESS_CHECK_INTERVAL_MS: "100" }, { extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed", 2)] } });
});
afterAll(() => server.stop(0));

test("a key's budget lowered under an open session ends it 4402 budget_exceeded, its delivered usage billed", async () => {
  const { key, keyId, tenantId } = await createKey(server.ctx.database, `budget-${crypto.randomUUID()}`);
  await server.ctx.meter.ledger.credit(tenantId, { credits: 10_000_000, type: "adjustment", description: "test" });
  await writeLimits(server.ctx.database.sql, tenantId, keyId, { usd_per_day: 1 });
  const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
  c.send({ type: "text", text: "x".repeat(20) });
  c.send({ type: "flush" });
  await c.opened;
  while (c.rec.audio.length === 0) await Bun.sleep(20);
  await writeLimits(server.ctx.database.sql, tenantId, keyId, { usd_per_day: 0.0003 }); // 30 characters: spent by the next stretch
  // Text keeps coming, as a client whose key leaked would send it; the session must end on its own.
  for (let i = 0; i < 100 && c.ws.readyState === WebSocket.OPEN; i++) {
    c.send({ type: "text", text: "y".repeat(100) });
    c.send({ type: "flush" });
    await Bun.sleep(50);
  }
  if (c.ws.readyState === WebSocket.OPEN) c.send({ type: "close" });
  const rec = await c.closed;
  expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "budget_exceeded" }) });
  const { db, schema } = server.ctx.database;
  const [activity] = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId)).orderBy(desc(schema.activity.startedAt));
  expect(activity!.credits).toBe(activity!.usageAmount * 10);
});
