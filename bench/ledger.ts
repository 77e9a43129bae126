// bun run bench:ledger — metered requests per second (each one a credit hold and a settle: its
// debits, carry and activity record) on SQLite and on PostgreSQL with one and with two server
// instances (processes) sharing the database, then a reconciliation of every tenant's books. A
// hold written behind (a rich account, a warm view) goes into its settle's transaction when the
// request settles within DEFER_MS, as these do: no hold row is written for it (since 28 November,
// so figures from before are not comparable).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq, sql } from "drizzle-orm";
import { ensureTenant } from "../src/accounts/keys.ts";
import { openDatabase, type Database } from "../src/db/open.ts";
import { Ledger } from "../src/ledger/ledger.ts";
import { freshPostgres } from "../test/helpers/postgres.ts";
import { SERVER_RUNTIME } from "./lib/procs.ts";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 6000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 16);
const INITIAL = 1_000_000_000;
const root = new URL("..", import.meta.url).pathname;

async function reconcile(database: Database, tenantIds: string[]) {
  const { db, schema } = database;
  let ok = true;
  let records = 0;
  for (const tenantId of tenantIds) {
    const [bal] = await db.select().from(schema.balances).where(eq(schema.balances.tenantId, tenantId));
    const [act] = await db
      .select({ n: sql<number>`count(*)`, credits: sql<number>`coalesce(sum(${schema.activity.credits}), 0)` })
      .from(schema.activity)
      .where(eq(schema.activity.tenantId, tenantId));
    records += Number(act.n);
    ok &&= bal.paidCredits === INITIAL - Number(act.credits) && bal.paidHeld === 0;
  }
  return { ok, records };
}

async function run(name: string, url: string, instances: number, tenantsCount = TENANTS) {
  const database = await openDatabase(url);
  const ledger = new Ledger(database);
  const tenantIds: string[] = [];
  for (let i = 0; i < tenantsCount; i++) {
    const { tenantId } = await ensureTenant(database, `bench-${crypto.randomUUID()}`);
    await ledger.credit(tenantId, { credits: INITIAL, type: "adjustment", description: "bench" });
    tenantIds.push(tenantId);
  }
  const per = Math.floor(REQUESTS / instances);
  const t0 = performance.now();
  const workers = Array.from({ length: instances }, () =>
    Bun.spawn(["bun", "bench/ledger-worker.ts", tenantIds.join(","), String(per), String(CONCURRENCY)], {
      cwd: root,
      env: { ...SERVER_RUNTIME, ...process.env, DATABASE_URL: url },
      stdout: "pipe",
      stderr: "inherit",
    }),
  );
  const results = await Promise.all(workers.map(async (w) => JSON.parse(await new Response(w.stdout).text()) as { done: number; ms: number }));
  const wall = performance.now() - t0;
  const done = results.reduce((n, r) => n + r.done, 0);
  const slowest = Math.max(...results.map((r) => r.ms));
  const books = await reconcile(database, tenantIds);
  console.log(
    `${name.padEnd(44)} ${String(done).padStart(6)} requests  ${(done / (slowest / 1000)).toFixed(0).padStart(6)} /s  ` +
      `(${instances} instance${instances > 1 ? "s" : ""} × ${CONCURRENCY} in flight, ${tenantsCount} tenant${tenantsCount > 1 ? "s" : ""}; wall ${wall.toFixed(0)} ms)  ` +
      `reconciliation: ${books.ok && books.records === done ? "exact" : "MISMATCH"} (${books.records} records)`,
  );
  await database.close();
}

console.log(`voxroute ledger benchmark: each request = hold + settle (debits, carry, activity record; a hold written behind goes into its settle's batch); ${navigator.hardwareConcurrency} cores`);
const sqliteFile = () => `sqlite://${join(mkdtempSync(join(tmpdir(), "bench-ledger-")), "db.sqlite")}`;
await run("SQLite (file, WAL)", sqliteFile(), 1);
// Several processes on one SQLite file (REUSE_PORT, docs/deployment.md): their batches take turns on the file's one writer.
const sqlite2 = sqliteFile();
await run("SQLite (file, WAL), two instances", sqlite2, 2);
await run("SQLite (file, WAL), two instances, one hot tenant", sqlite2, 2, 1);
const pg1 = await freshPostgres();
await run("PostgreSQL, one instance", pg1.url, 1);
await run("PostgreSQL, one instance, one hot tenant", pg1.url, 1, 1);
await pg1.drop();
const pg2 = await freshPostgres();
await run("PostgreSQL, two instances", pg2.url, 2);
await run("PostgreSQL, two instances, one hot tenant", pg2.url, 2, 1);
await pg2.drop();
