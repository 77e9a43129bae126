import { desc, eq } from "drizzle-orm";
import { createKeyIn } from "../../src/accounts/keys.ts";
import { type Database, openDatabase } from "../../src/db/open.ts";
import { Ledger } from "../../src/ledger/ledger.ts";
import type { TestServer } from "./server.ts";

/** A key for the tenant, created if need be: the CLI's `keys create` path, in a transaction of its own. */
export function createKey(database: Database, tenantName: string): Promise<{ key: string; keyId: string; tenantId: string }> {
  return database.sql.transaction((tx) => createKeyIn(tx, tenantName));
}

/** A new tenant with a key and `credits` paid credits in the database at `databaseUrl` (a server in its own process uses it); its key. */
export async function accountIn(databaseUrl: string, credits: number): Promise<string> {
  const database = await openDatabase(databaseUrl);
  try {
    const { key, tenantId } = await createKey(database, `crash-${crypto.randomUUID()}`);
    await new Ledger(database).credit(tenantId, { credits, type: "adjustment", description: "test" });
    return key;
  } finally {
    await database.close();
  }
}

/** A new tenant with a key and, unless told otherwise, plenty of paid credits. */
export async function fundedAccount(server: TestServer, credits = 10_000_000) {
  const { key, tenantId } = await createKey(server.ctx.database, `test-${crypto.randomUUID()}`);
  if (credits) await server.ctx.meter.ledger.credit(tenantId, { credits, type: "adjustment", description: "test" });
  return { key, tenantId };
}

/** The tenant's newest activity record, waiting briefly for a session that is still settling. */
export async function lastActivity(server: TestServer, tenantId: string) {
  const { db, schema } = server.ctx.database;
  for (let i = 0; i < 50; i++) {
    const [row] = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId)).orderBy(desc(schema.activity.startedAt));
    if (row) return row;
    await Bun.sleep(20);
  }
  throw new Error("no activity record");
}
