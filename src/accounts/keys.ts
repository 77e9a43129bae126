import { randomBytes } from "node:crypto";
import { and, eq, inArray, isNotNull, or } from "drizzle-orm";
import type { Database } from "../db/open.ts";
import type { SqlQuery } from "../db/sql.ts";
import { limitsColumn } from "../limits/limit-values.ts";
import type { Limits, PrincipalLimits } from "../limits/types.ts";

// API keys: random, prefixed, shown once, stored only as a SHA-256 hash. A key carries 256 bits of
// randomness, so a fast hash is enough: there is nothing to brute-force.

const KEY_PREFIX = "vxr_";
const SHOWN_PREFIX_LENGTH = 12;

export interface Principal {
  tenantId: string;
  tenantName: string;
  keyId: string;
  /** The key's shown prefix (`vxr_AbCdEfGh`): what logs and listings name a key by. */
  keyPrefix: string;
  /** The tenant's and the key's limits, as the key view last read them (absent where a principal is made without a key). */
  limits?: PrincipalLimits;
}

/** A key's SHA-256, hex: every request and handshake hashes its key (Bun's one-shot hash is a quarter of node:crypto's `createHash`). */
export function hashKey(key: string): string {
  return Bun.SHA256.hash(key, "hex");
}

export function newId(): string {
  return crypto.randomUUID();
}

/**
 * Finds or creates the tenant by name (and e-mail, for signup accounts); true when it is new. A new
 * tenant starts with `limits` (the operator's DEFAULT_TENANT_*).
 */
export function ensureTenant(database: Database, name: string, email?: string, limits: Limits = {}): Promise<{ tenantId: string; created: boolean }> {
  return database.sql.transaction((tx) => ensureTenantIn(tx, name, email, limits));
}

/** `ensureTenant` inside the caller's transaction. */
export async function ensureTenantIn(tx: SqlQuery, name: string, email?: string, limits: Limits = {}): Promise<{ tenantId: string; created: boolean }> {
  const byName = async () => (await tx.query<{ id: string }>("SELECT id FROM tenants WHERE name = ?", [name]))[0];
  const existing = await byName();
  if (existing) return { tenantId: existing.id, created: false };
  const id = newId();
  const inserted = await tx.query("INSERT INTO tenants (id, name, email, limits, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id", [
    id,
    name,
    email ?? null,
    limitsColumn(limits),
    new Date(),
  ]);
  if (inserted.length) return { tenantId: id, created: true };
  return { tenantId: (await byName())!.id, created: false };
}

/**
 * Mints a key for the tenant, created if need be, inside the caller's transaction (the CLI funds
 * the key in the same one); the returned `key` is the only time it exists in clear.
 */
export async function createKeyIn(tx: SqlQuery, tenantName: string, newTenantLimits: Limits = {}): Promise<{ key: string; keyId: string; tenantId: string }> {
  const { tenantId } = await ensureTenantIn(tx, tenantName, undefined, newTenantLimits);
  return { ...(await mintKeyIn(tx, tenantId)), tenantId };
}

/** A new key for an existing tenant. */
export function mintKey(database: Database, tenantId: string): Promise<{ key: string; keyId: string; prefix: string }> {
  return database.sql.transaction((tx) => mintKeyIn(tx, tenantId));
}

/** `mintKey` inside the caller's transaction. */
export async function mintKeyIn(tx: SqlQuery, tenantId: string): Promise<{ key: string; keyId: string; prefix: string }> {
  const key = KEY_PREFIX + randomBytes(32).toString("base64url");
  const keyId = newId();
  const prefix = key.slice(0, SHOWN_PREFIX_LENGTH);
  await tx.query("INSERT INTO api_keys (id, tenant_id, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?)", [keyId, tenantId, prefix, hashKey(key), new Date()]);
  return { key, keyId, prefix };
}

/** A key's stored SHA-256 (hex), revoked or not; undefined for an unknown id. */
export async function keySha256(database: Database, keyId: string): Promise<string | undefined> {
  const k = database.schema.apiKeys;
  const [row] = await database.db.select({ hash: k.hash }).from(k).where(eq(k.id, keyId));
  return row?.hash;
}

/** The bearer token of an `Authorization` header, or undefined. */
export function bearerToken(header: string | null | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m?.[1];
}

/** Keys checked per statement: well under every dialect's limit on bound parameters. */
const WITHDRAWN_BATCH = 1000;

/**
 * Of these keys, those that no longer authenticate, with the code `authenticate` would now give:
 * a revoked key `invalid_api_key`, a key of a disabled tenant `tenant_disabled`. One query (per
 * thousand keys), whatever the number of sessions using them.
 */
export async function withdrawnKeys({ db, schema }: Database, keyIds: string[]): Promise<Map<string, "invalid_api_key" | "tenant_disabled">> {
  const withdrawn = new Map<string, "invalid_api_key" | "tenant_disabled">();
  const k = schema.apiKeys;
  const t = schema.tenants;
  for (let i = 0; i < keyIds.length; i += WITHDRAWN_BATCH) {
    const rows = await db
      .select({ keyId: k.id, revokedAt: k.revokedAt, disabled: t.disabled })
      .from(k)
      .innerJoin(t, eq(k.tenantId, t.id))
      .where(and(inArray(k.id, keyIds.slice(i, i + WITHDRAWN_BATCH)), or(isNotNull(k.revokedAt), eq(t.disabled, true))));
    for (const row of rows) withdrawn.set(row.keyId, row.revokedAt ? "invalid_api_key" : "tenant_disabled");
  }
  return withdrawn;
}
