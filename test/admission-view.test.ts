import { afterAll, beforeAll, expect, test } from "bun:test";
import { revokeKeys, setTenantDisabled } from "../src/accounts/tenants.ts";
import type { Database } from "../src/db/open.ts";
import { startFakeOpenAi } from "./fakes/openai.ts";
import { openAiAt } from "./fakes/server-env.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { until } from "./helpers/realtime.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";

// Admission from the instance's views of keys and funds (src/accounts/key-view.ts,
// src/ledger/funds-view.ts): a served key and a rich account reach the upstream without a
// database round trip, and what is withdrawn elsewhere still stops being served from the next
// access check on. Revocations and disablings here are made as another process makes them: in
// the database, the server's views not told.

const fake = startFakeOpenAi();
let server: TestServer;
beforeAll(async () => void (server = await startTestServer({ ...openAiAt(fake), ACCESS_CHECK_INTERVAL_MS: "500" })));
afterAll(() => stopServerAndFakes(server, fake));

const TEXT = "Admitted from what this instance already knows.";
const speak = (key: string) =>
  fetch(`${server.url}/oai/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "tts-1", voice: "alloy", input: TEXT, response_format: "pcm" }),
  });

async function served(key: string): Promise<void> {
  const res = await speak(key);
  expect(res.status).toBe(200);
  expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
}

/** Every statement of the database's hot path waits until `release`: the SQLite worker as good as stalled. */
function stall(database: Database) {
  const sql = database.sql;
  const { query, transaction, inWorker } = sql;
  let open = () => {};
  const gate = new Promise<void>((resolve) => (open = resolve));
  /** `writes`: transactions and the ledger's batches (a hold, a settle), not the views' reads. */
  const state = { waiting: 0, writes: 0 };
  sql.query = (async (text: string, params?: unknown[]) => {
    state.waiting++;
    await gate;
    return query.call(sql, text, params);
  }) as typeof sql.query;
  sql.transaction = (async (fn: Parameters<typeof transaction>[0]) => {
    state.waiting++;
    state.writes++;
    await gate;
    return transaction.call(sql, fn);
  }) as typeof sql.transaction;
  // A SQLite file's ledger batches run whole in the worker: they wait too.
  if (inWorker)
    sql.inWorker = async (name, args) => {
      state.waiting++;
      state.writes++;
      await gate;
      return inWorker.call(sql, name, args);
    };
  return {
    state,
    release() {
      Object.assign(sql, { query, transaction, inWorker });
      open();
    },
  };
}

test("a key revoked by another process is refused from the next access check on", async () => {
  const { key, tenantId } = await fundedAccount(server);
  await served(key);
  await revokeKeys(server.ctx.database, tenantId, key.slice(0, 12));
  await server.ctx.keys.nextCheck();
  const res = await speak(key);
  expect(res.status).toBe(401);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
});

test("a tenant disabled by another process is refused from the next access check on", async () => {
  const { key, tenantId } = await fundedAccount(server);
  await served(key);
  await setTenantDisabled(server.ctx.database, tenantId, true);
  await server.ctx.keys.nextCheck();
  const res = await speak(key);
  expect(res.status).toBe(403);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("tenant_disabled");
});

test("on a warm view the upstream is called and audio flows while the database answers nothing; the hold and the bill land once it does", async () => {
  const credits = 10_000_000;
  const { key, tenantId } = await fundedAccount(server, credits);
  await served(key); // the key and the funds are in the views
  await server.ctx.keys.nextCheck(); // just confirmed: trusted for two intervals more, well past this test
  const before = fake.speech.length;
  const stalled = stall(server.ctx.database);
  const answer = speak(key);
  await until(() => fake.speech.length > before);
  const res = await answer;
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  expect(first.value!.byteLength).toBeGreaterThan(0);
  // The request's hold (written behind, after up to DEFER_MS) or its settle writes to the database, and waits with everything else.
  await until(() => stalled.state.writes > 0);
  stalled.release();
  while (!(await reader.read()).done);
  // Both requests billed once each, nothing left held.
  const records = () => server.ctx.database.sql.query<{ status: string; credits: number }>("SELECT status, credits FROM activity WHERE tenant_id = ?", [tenantId]);
  while ((await records()).length < 2) await Bun.sleep(10);
  const rows = await records();
  expect(rows.map((r) => r.status)).toEqual(["completed", "completed"]);
  const { balance } = await server.ctx.meter.ledger.snapshot(tenantId);
  expect(balance.paidHeld).toBe(0);
  expect(balance.paidCredits).toBe(credits - rows.reduce((n, r) => n + Number(r.credits), 0));
});
