import type { Database } from "../../src/db/open.ts";
import type { Limits } from "../../src/limits/types.ts";

/** Writes a tenant's limits column (what `limits set --tenant` stores); read with the key on its next read by the key view. */
export async function setTenantLimits(database: Database, tenantId: string, limits: Limits): Promise<void> {
  await database.sql.transaction((tx) => tx.query("UPDATE tenants SET limits = ? WHERE id = ?", [JSON.stringify(limits), tenantId]));
}

/** Writes a key's limits column. */
export async function setKeyLimits(database: Database, keyId: string, limits: Limits): Promise<void> {
  await database.sql.transaction((tx) => tx.query("UPDATE api_keys SET limits = ? WHERE id = ?", [JSON.stringify(limits), keyId]));
}
