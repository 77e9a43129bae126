import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../db/open.ts";

// Operator actions on tenants and their keys.

export async function tenantByName({ db, schema }: Database, name: string): Promise<{ id: string; disabled: boolean } | undefined> {
  const [row] = await db.select({ id: schema.tenants.id, disabled: schema.tenants.disabled }).from(schema.tenants).where(eq(schema.tenants.name, name));
  return row;
}

/** Every tenant with its paid balance (0 before its first credit), oldest first. */
export async function listTenants({ db, schema }: Database) {
  const t = schema.tenants;
  const b = schema.balances;
  const rows = await db
    .select({ id: t.id, name: t.name, email: t.email, disabled: t.disabled, createdAt: t.createdAt, paidCredits: b.paidCredits })
    .from(t)
    .leftJoin(b, eq(b.tenantId, t.id))
    .orderBy(t.createdAt);
  return rows.map((r) => ({ ...r, paidCredits: r.paidCredits ?? 0 }));
}

export async function setTenantDisabled(database: Database, tenantId: string, disabled: boolean): Promise<void> {
  const t = database.schema.tenants;
  await database.transaction((tx) => tx.update(t).set({ disabled }).where(eq(t.id, tenantId)));
}

/** Revokes the tenant's live keys with this prefix; returns how many. */
export async function revokeKeys(database: Database, tenantId: string, prefix: string): Promise<number> {
  const k = database.schema.apiKeys;
  const rows = await database.transaction((tx) =>
    tx
      .update(k)
      .set({ revokedAt: new Date() })
      .where(and(eq(k.tenantId, tenantId), eq(k.prefix, prefix), isNull(k.revokedAt)))
      .returning({ id: k.id }),
  );
  return rows.length;
}
