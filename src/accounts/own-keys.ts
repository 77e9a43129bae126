import { and, desc, eq, gte, isNotNull, isNull, max, or } from "drizzle-orm";
import type { Database } from "../db/open.ts";
import { asNumber } from "../db/sql.ts";
import { ApiError } from "../errors.ts";
import { limitsColumn, looserThanTenant } from "../limits/limit-values.ts";
import { type Limits, readLimits } from "../limits/types.ts";
import { mintKeyIn } from "./keys.ts";

// A tenant's own keys, as `/account/keys` manages them: listed by prefix (the CLI's `keys list` too),
// minted (shown once) and revoked. Revoking ends the key's open sessions, as the CLI's revoke does
// (sessions/access-watch.ts).

/** Live keys a tenant may hold; signing in mints one each time, so a tenant can clear them out here. */
export const LIVE_KEYS_PER_TENANT = 100;
/** How far back `last_used_at` looks in the activity (the range the activity endpoint allows). */
const LAST_USED_DAYS = 90;

export interface OwnKey {
  id: string;
  prefix: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** Every key of the tenant, newest first, with its latest request of the last 90 days. */
export async function listOwnKeys({ db, schema }: Database, tenantId: string): Promise<OwnKey[]> {
  const k = schema.apiKeys;
  const a = schema.activity;
  const since = new Date(Date.now() - LAST_USED_DAYS * 86_400_000);
  const [keys, used] = await Promise.all([
    db.select({ id: k.id, prefix: k.prefix, createdAt: k.createdAt, revokedAt: k.revokedAt }).from(k).where(eq(k.tenantId, tenantId)).orderBy(desc(k.createdAt), desc(k.id)),
    db
      .select({ keyId: a.keyId, last: max(a.startedAt) })
      .from(a)
      .where(and(eq(a.tenantId, tenantId), gte(a.startedAt, since), isNotNull(a.keyId)))
      .groupBy(a.keyId),
  ]);
  const lastUsed = new Map(used.map((u) => [u.keyId, u.last]));
  return keys.map((key) => {
    const last = lastUsed.get(key.id);
    return {
      id: key.id,
      prefix: key.prefix,
      created_at: key.createdAt.toISOString(),
      revoked_at: key.revokedAt?.toISOString() ?? null,
      // max() comes back as the column's type on PostgreSQL, as epoch milliseconds on SQLite.
      last_used_at: last ? new Date(last).toISOString() : null,
    };
  });
}

/**
 * A new key for the tenant, with its own `limits`: the only time it exists in clear. 400 past the
 * live-key limit, or for a limit above the tenant's. The count and the insert are one transaction
 * that holds the tenant's row (PostgreSQL) or the one writer (SQLite), so creations at once are
 * counted one after the other, in any process.
 */
export function createOwnKey(database: Database, tenantId: string, limits: Limits = {}) {
  const forUpdate = database.dialect === "postgres" ? " FOR UPDATE" : "";
  return database.sql.transaction(async (tx) => {
    const [tenant] = await tx.query<{ limits: string | null }>(`SELECT limits FROM tenants WHERE id = ?${forUpdate}`, [tenantId]);
    const looser = looserThanTenant(limits, readLimits(tenant?.limits));
    if (looser) throw new ApiError("invalid_request", `${looser} may not be above the account's own (${readLimits(tenant?.limits)[looser]})`, { param: looser });
    const [{ live }] = await tx.query<{ live: unknown }>("SELECT count(*) AS live FROM api_keys WHERE tenant_id = ? AND revoked_at IS NULL", [tenantId]);
    if (asNumber(live) >= LIVE_KEYS_PER_TENANT) throw new ApiError("invalid_request", `an account holds at most ${LIVE_KEYS_PER_TENANT} live keys: revoke one first`);
    const { key, keyId, prefix } = await mintKeyIn(tx, tenantId);
    const column = limitsColumn(limits);
    if (column) await tx.query("UPDATE api_keys SET limits = ? WHERE id = ?", [column, keyId]);
    return { api_key: key, id: keyId, key_prefix: prefix, limits };
  });
}

/**
 * Revokes the tenant's live key named by its id or its prefix. 404 when no live key of the tenant
 * has it (another tenant's keys are as absent as unknown ones); 400 when a prefix names several.
 */
export async function revokeOwnKey(database: Database, tenantId: string, name: string): Promise<void> {
  const k = database.schema.apiKeys;
  const matching = and(eq(k.tenantId, tenantId), isNull(k.revokedAt), or(eq(k.id, name), eq(k.prefix, name)));
  const found = await database.db.select({ id: k.id }).from(k).where(matching);
  if (found.length === 0) throw new ApiError("not_found", `no live key ${name} on this account`, { param: "key" });
  if (found.length > 1) throw new ApiError("invalid_request", `several live keys start with ${name}: name the key by its id`, { param: "key" });
  await database.transaction((tx) =>
    tx
      .update(k)
      .set({ revokedAt: new Date() })
      .where(and(eq(k.id, found[0].id), isNull(k.revokedAt))),
  );
}
