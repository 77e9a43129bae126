import { randomBytes } from "node:crypto";
import { and, eq, gt, inArray, isNull, lte } from "drizzle-orm";
import { hashKey } from "../accounts/keys.ts";
import type { Database } from "../db/open.ts";
import { ApiError } from "../errors.ts";

// Client secrets: short-lived, single-use credentials that open one profile's conversation (or, on
// `/oai`, a transcription session) without an API key (a browser or phone gets one from its own
// backend). Like API keys they carry 256 random bits and are stored only as a SHA-256 hash
// (docs/realtime.md#client-secrets).

const SECRET_PREFIX = "vxr_cs_";

export const EXPIRES_IN = { min: 10, max: 600, default: 60 };

export interface ClientSecret {
  client_secret: string;
  expires_at: string;
  profile_id: string;
}

/**
 * What a secret opens: one profile's conversation, or (no profile) an `/oai` transcription session;
 * `session` is `/oai`'s settings for it, or a phone call's identifiers (surfaces/telephony).
 */
export interface SecretGrant {
  profileId: string | null;
  session?: Record<string, unknown>;
}

/** What a redeemed secret opens, and for whom: the minting tenant (and key). */
export interface RedeemedSecret extends SecretGrant {
  tenantId: string;
  keyId: string;
}

export class ClientSecrets {
  constructor(private readonly database: Database) {}

  /** A new secret for a profile the caller has already found to be the tenant's own. */
  async mint(owner: { tenantId: string; keyId: string }, profileId: string, expiresInSeconds: number): Promise<ClientSecret> {
    const { secret, expiresAt } = await this.grant(owner, { profileId }, expiresInSeconds, SECRET_PREFIX);
    return { client_secret: secret, expires_at: expiresAt.toISOString(), profile_id: profileId };
  }

  /** A new secret for what `grant` names, spelt with `prefix` (OpenAI's clients know theirs by `ek_`). */
  async grant(owner: { tenantId: string; keyId: string }, grant: SecretGrant, expiresInSeconds: number, prefix: string): Promise<{ secret: string; expiresAt: Date }> {
    const secret = prefix + randomBytes(32).toString("base64url");
    const now = new Date();
    const expiresAt = new Date(now.getTime() + expiresInSeconds * 1000);
    const t = this.database.schema.realtimeClientSecrets;
    await this.database.transaction(async (tx) => {
      // Expired rows go with each mint, so the table holds only mints that may still be used.
      await tx.delete(t).where(lte(t.expiresAt, now));
      await tx
        .insert(t)
        .values({ hash: hashKey(secret), tenantId: owner.tenantId, keyId: owner.keyId, profileId: grant.profileId, session: grant.session ? JSON.stringify(grant.session) : null, expiresAt });
    });
    return { secret, expiresAt };
  }

  /**
   * Spends a secret: one conditional UPDATE, so of two concurrent redeems exactly one gets the row.
   * Unknown, used and expired secrets (and those of a revoked key or disabled tenant) are the same
   * `invalid_client_secret`, telling nothing apart.
   */
  async redeem(secret: string): Promise<RedeemedSecret> {
    const { realtimeClientSecrets: t, apiKeys, tenants } = this.database.schema;
    const now = new Date();
    const [row] = await this.database.transaction((tx) => {
      // A secret is worth no more than the key that minted it: revoked, or its tenant disabled, it opens nothing.
      const liveKeys = tx
        .select({ id: apiKeys.id })
        .from(apiKeys)
        .innerJoin(tenants, eq(apiKeys.tenantId, tenants.id))
        .where(and(isNull(apiKeys.revokedAt), eq(tenants.disabled, false)));
      return tx
        .update(t)
        .set({ usedAt: now })
        .where(and(eq(t.hash, hashKey(secret)), isNull(t.usedAt), gt(t.expiresAt, now), inArray(t.keyId, liveKeys)))
        .returning({ tenantId: t.tenantId, keyId: t.keyId, profileId: t.profileId, session: t.session });
    });
    if (!row) throw new ApiError("invalid_client_secret", "the client secret is unknown, used or expired");
    const { session, ...rest } = row;
    return session ? { ...rest, session: JSON.parse(session) } : rest;
  }
}
