import type { SqlQuery } from "../db/sql.ts";
import { type PrincipalLimits, readLimits } from "./types.ts";

/** A key's and its tenant's limits read now: for payers that come without a key view's principal (a redeemed client secret pays as the key that minted it). */
export async function limitsOfKey(sql: SqlQuery, keyId: string): Promise<PrincipalLimits> {
  const [row] = await sql.query<{ tenant_limits: string | null; key_limits: string | null }>(
    "SELECT tenants.limits AS tenant_limits, api_keys.limits AS key_limits FROM api_keys JOIN tenants ON tenants.id = api_keys.tenant_id WHERE api_keys.id = ?",
    [keyId],
  );
  return { tenant: readLimits(row?.tenant_limits), key: readLimits(row?.key_limits) };
}
