import { and, eq, isNull } from "drizzle-orm";
import type { Database } from "../db/open.ts";

// Operator actions on tenants and their keys.

export async function tenantByName({ db, schema }: Database, name: string): Promise<{ id: string; disabled: boolean } | undefined> {
  const [row] = await db.select({ id: schema.tenants.id, disabled: schema.tenants.disabled }).from(schema.tenants).where(eq(schema.tenants.name, name));
  return row;
}

export async function setTenantDisabled(database: Database, tenantId: string, disabled: boolean): Promise<void> {
  const t = database.schema.tenants;
  await database.transaction((tx) => tx.update(t).set({ disabled }).where(eq(t.id, tenantId)));
}

/** Keys of a tenant, by prefix only: the keys themselves are not stored. */
export function listKeys({ db, schema }: Database, tenantId: string) {
  const k = schema.apiKeys;
  return db.select({ id: k.id, prefix: k.prefix, createdAt: k.createdAt, revokedAt: k.revokedAt }).from(k).where(eq(k.tenantId, tenantId));
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
