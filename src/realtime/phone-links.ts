import { createPublicKey, randomBytes } from "node:crypto";
import { and, asc, eq, isNull } from "drizzle-orm";
import { hashKey } from "../accounts/keys.ts";
import type { Database } from "../db/open.ts";
import { ApiError } from "../errors.ts";
import { isObject } from "../util/is-object.ts";

// Phone links: a carrier's number pointed at a realtime profile (docs/telephony.md). The webhook
// URL carries a token of 256 random bits, stored only as its SHA-256 hash, like keys. The carrier's
// credential (Twilio's auth token, Telnyx's public key) is kept to check the webhook's signatures
// and is never returned.

export const CARRIERS = ["twilio", "telnyx"] as const;
export type Carrier = (typeof CARRIERS)[number];

/** What a link's owner sees of it; `webhook_url` only when it is made (the token is not kept). */
export interface PhoneLink {
  id: string;
  object: "realtime.phone_link";
  carrier: Carrier;
  profile_id: string;
  webhook_url?: string;
  created_at: string;
}

/** A link as the webhook finds it by its token: whose, which profile, and the credential its signatures are checked with. */
export interface LinkedNumber {
  id: string;
  tenantId: string;
  keyId: string;
  profileId: string;
  carrier: Carrier;
  credential: string;
}

/** Links a profile may have (a number per link; a check, not a quota). */
export const LINKS_PER_PROFILE = 100;

const TOKEN_PREFIX = "vxr_pl_";

/** Telnyx's public key as its portal shows it: base64 of the 32 raw Ed25519 bytes. */
function telnyxKey(value: string): string {
  const raw = Buffer.from(value, "base64");
  try {
    if (raw.length !== 32) throw new Error("not 32 bytes");
    createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" });
  } catch {
    throw new ApiError("invalid_request", "telnyx_public_key is the base64 of a 32-byte Ed25519 public key, as the Telnyx portal shows it", { param: "telnyx_public_key" });
  }
  return value;
}

/** The carrier and its credential from a create body; the credential's own param names the refusals. */
export function readLinkBody(body: unknown): { carrier: Carrier; credential: string } {
  if (!isObject(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
  const { carrier } = body;
  if (carrier !== "twilio" && carrier !== "telnyx") throw new ApiError("invalid_request", "carrier must be twilio or telnyx", { param: "carrier" });
  const param = carrier === "twilio" ? "twilio_auth_token" : "telnyx_public_key";
  const value = body[param];
  if (typeof value !== "string" || !value.trim() || value.length > 200)
    throw new ApiError("invalid_request", `${param} is required for carrier ${carrier} (a string of at most 200 characters)`, { param });
  return { carrier, credential: carrier === "telnyx" ? telnyxKey(value.trim()) : value.trim() };
}

export class PhoneLinks {
  constructor(private readonly database: Database) {}

  /** A new link and its token (said once, in `webhook_url`, by the caller). */
  async create(owner: { tenantId: string; keyId: string }, profileId: string, carrier: Carrier, credential: string): Promise<{ link: PhoneLink; token: string }> {
    const t = this.database.schema.realtimePhoneLinks;
    const live = await this.database.db
      .select({ id: t.id })
      .from(t)
      .where(and(eq(t.tenantId, owner.tenantId), eq(t.profileId, profileId), isNull(t.revokedAt)));
    if (live.length >= LINKS_PER_PROFILE) throw new ApiError("invalid_request", `a profile has at most ${LINKS_PER_PROFILE} phone links`);
    const token = TOKEN_PREFIX + randomBytes(32).toString("base64url");
    const row = { id: `pl_${Bun.randomUUIDv7().replaceAll("-", "")}`, tenantId: owner.tenantId, keyId: owner.keyId, profileId, carrier, tokenHash: hashKey(token), credential, createdAt: new Date() };
    await this.database.transaction((tx) => tx.insert(t).values(row));
    return { link: viewOf(row), token };
  }

  async list(tenantId: string, profileId: string): Promise<PhoneLink[]> {
    const t = this.database.schema.realtimePhoneLinks;
    const rows = await this.database.db
      .select()
      .from(t)
      .where(and(eq(t.tenantId, tenantId), eq(t.profileId, profileId), isNull(t.revokedAt)))
      .orderBy(asc(t.createdAt), asc(t.id));
    return rows.map(viewOf);
  }

  /** Revokes the tenant's link; 404 when it has none of that id (or it is revoked already). */
  async revoke(tenantId: string, id: string): Promise<PhoneLink> {
    const t = this.database.schema.realtimePhoneLinks;
    const [row] = await this.database.transaction((tx) =>
      tx
        .update(t)
        .set({ revokedAt: new Date() })
        .where(and(eq(t.id, id), eq(t.tenantId, tenantId), isNull(t.revokedAt)))
        .returning(),
    );
    if (!row) throw new ApiError("not_found", `no phone link ${id}`);
    return viewOf(row);
  }

  /** The live link a webhook's token names, if any. */
  async byToken(token: string): Promise<LinkedNumber | undefined> {
    const t = this.database.schema.realtimePhoneLinks;
    const [row] = await this.database.db
      .select()
      .from(t)
      .where(and(eq(t.tokenHash, hashKey(token)), isNull(t.revokedAt)));
    if (!row) return undefined;
    return { id: row.id, tenantId: row.tenantId, keyId: row.keyId, profileId: row.profileId, carrier: row.carrier as Carrier, credential: row.credential };
  }
}

function viewOf(row: { id: string; carrier: string; profileId: string; createdAt: Date }): PhoneLink {
  return { id: row.id, object: "realtime.phone_link", carrier: row.carrier as Carrier, profile_id: row.profileId, created_at: row.createdAt.toISOString() };
}
