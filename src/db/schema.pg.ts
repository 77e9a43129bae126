import { bigint, boolean, index, primaryKey, pgTable, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

// PostgreSQL shape of the database (for fleets). Keep in step with schema.sqlite.ts: same tables,
// same columns, same names. Credits are whole integers (1 credit = 0.000001 USD).

const ms = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
const integer = (name: string) => bigint(name, { mode: "number" });

export const tenants = pgTable("tenants", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  /** Set for accounts made by e-mail signup. */
  email: text("email").unique(),
  disabled: boolean("disabled").notNull().default(false),
  /** The tenant's limits as JSON (`src/limits/types.ts`); null for none. */
  limits: text("limits"),
  createdAt: ms("created_at").notNull(),
});

export const apiKeys = pgTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    /** The first characters of the key, enough to recognise it in a listing. */
    prefix: text("prefix").notNull(),
    /** SHA-256 of the whole key, hex; the key itself is never stored. */
    hash: text("hash").notNull().unique(),
    /** The key's own limits as JSON (`src/limits/types.ts`), applied inside its tenant's; null for none. */
    limits: text("limits"),
    createdAt: ms("created_at").notNull(),
    revokedAt: ms("revoked_at"),
  },
  (t) => [index("api_keys_tenant_idx").on(t.tenantId)],
);

/** One row per tenant: paid credits, what holds keep of them, and the exact sub-credit carry. */
export const balances = pgTable("balances", {
  tenantId: text("tenant_id")
    .primaryKey()
    .references(() => tenants.id),
  paidCredits: integer("paid_credits").notNull().default(0),
  paidHeld: integer("paid_held").notNull().default(0),
  /** Sub-credit remainder of metered cost, exactly: carry_num / carry_den credits, in [0, 1). */
  carryNum: integer("carry_num").notNull().default(0),
  carryDen: integer("carry_den").notNull().default(1),
  updatedAt: ms("updated_at").notNull(),
});

/** Promotional credits, optionally limited to provider/model targets and an expiry. */
export const grants = pgTable(
  "grants",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    name: text("name").notNull(),
    totalCredits: integer("total_credits").notNull(),
    remainingCredits: integer("remaining_credits").notNull(),
    heldCredits: integer("held_credits").notNull().default(0),
    /** JSON array of {provider, model}; empty = any binding. */
    targets: text("targets").notNull().default("[]"),
    expiresAt: ms("expires_at"),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("grants_tenant_idx").on(t.tenantId)],
);

/** Credits reserved for a request in flight, per source; released or turned into debits at settle (or at recovery, after a crash). */
export const holds = pgTable(
  "holds",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    /** JSON array of {source: grant id | "paid", credits}. */
    allocations: text("allocations").notNull(),
    totalCredits: integer("total_credits").notNull(),
    createdAt: ms("created_at").notNull(),
    /** Refreshed while the request runs; a lapsed hold is settled from its checkpoint by the hold keeper. */
    expiresAt: ms("expires_at").notNull(),
    /** JSON (ledger/checkpoint.ts): payer, binding and exact rate, and the usage delivered so far. */
    checkpoint: text("checkpoint"),
  },
  (t) => [index("holds_expiry_idx").on(t.expiresAt)],
);

/** Exactly one record per request, written in the same transaction as its debits. */
export const activity = pgTable(
  "activity",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    keyId: text("key_id"),
    surface: text("surface").notNull(),
    startedAt: ms("started_at").notNull(),
    finishedAt: ms("finished_at").notNull(),
    latencyMs: integer("latency_ms").notNull(),
    provider: text("provider").notNull(),
    model: text("model").notNull(),
    capability: text("capability").notNull(),
    status: text("status").notNull(),
    /** How the request ended (ledger/activity.ts OUTCOMES); null in records written before it was kept, read from the status. */
    outcome: text("outcome"),
    usageUnit: text("usage_unit").notNull(),
    usageAmount: integer("usage_amount").notNull(),
    credits: integer("credits").notNull(),
    /** JSON array of failed provider attempts before the one that served. */
    attempts: text("attempts").notNull().default("[]"),
    /** TTS: the voice the request named (null when it named none, and for STT); the voice catalogue's metrics count it. */
    voice: text("voice"),
    /**
     * JSON array, when more than one binding served the request (a failover mid-session): each
     * one's share in order, `[{provider, model, units, credits, voice?}]` (ledger/parts.ts); null otherwise.
     */
    parts: text("parts"),
    /** TTS: characters of `usage_amount` played from the TTS cache (docs/tts-cache.md#billing), billed at the cache's price factor. */
    cachedUnits: integer("cached_units").notNull().default(0),
  },
  (t) => [index("activity_tenant_started_idx").on(t.tenantId, t.startedAt, t.id), index("activity_voice_started_idx").on(t.voice, t.startedAt)],
);

/** Organization-level credit events: grants, top-ups, adjustments. */
export const creditTransactions = pgTable(
  "credit_transactions",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    type: text("type").notNull(),
    credits: integer("credits").notNull(),
    description: text("description").notNull(),
    /** Payment-provider or idempotency reference: makes a crediting event happen once. Never shown. */
    externalId: text("external_id").unique(),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("credit_transactions_tenant_idx").on(t.tenantId, t.createdAt)],
);

/** Every change to a credit source: debits for requests (negative), grants and top-ups (positive). */
export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    activityId: text("activity_id"),
    transactionId: text("transaction_id"),
    /** A grant id, or "paid". */
    source: text("source").notNull(),
    credits: integer("credits").notNull(),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("ledger_entries_tenant_idx").on(t.tenantId)],
);

/** Signup codes: stored as a keyed hash, single use, bounded attempts. */
export const emailCodes = pgTable(
  "email_codes",
  {
    id: text("id").primaryKey(),
    email: text("email").notNull(),
    codeHash: text("code_hash").notNull(),
    ip: text("ip").notNull(),
    attempts: integer("attempts").notNull().default(0),
    createdAt: ms("created_at").notNull(),
    expiresAt: ms("expires_at").notNull(),
    consumedAt: ms("consumed_at"),
  },
  (t) => [index("email_codes_email_idx").on(t.email, t.createdAt), index("email_codes_ip_idx").on(t.ip, t.createdAt)],
);

export const topUps = pgTable(
  "top_ups",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    idempotencyKey: text("idempotency_key").notNull(),
    amountCents: integer("amount_cents").notNull(),
    provider: text("provider").notNull(),
    checkoutId: text("checkout_id").notNull().unique(),
    url: text("url").notNull(),
    expiresAt: ms("expires_at").notNull(),
    createdAt: ms("created_at").notNull(),
    completedAt: ms("completed_at"),
  },
  (t) => [uniqueIndex("top_ups_idempotency_idx").on(t.tenantId, t.idempotencyKey)],
);

/** Small server-wide values that must survive restarts and be shared by instances (e.g. the signup secret). */
export const settings = pgTable("settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/** Realtime profiles: a reusable STT → application → TTS pipeline (also served as /el Speech Engines). */
export const realtimeProfiles = pgTable(
  "realtime_profiles",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    name: text("name").notNull(),
    /** JSON: `{stt: {model, …}, tts: {model, …}, upstream: {url, …}}`. */
    pipeline: text("pipeline").notNull(),
    revision: integer("revision").notNull().default(1),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [index("realtime_profiles_tenant_idx").on(t.tenantId)],
);

/** Single-use credentials for opening one profile's `/v1/realtime` (docs/realtime.md); expired rows are swept on mint. */
export const realtimeClientSecrets = pgTable(
  "realtime_client_secrets",
  {
    /** SHA-256 of the secret, hex; the secret itself is never stored. */
    hash: text("hash").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    /** The key that minted it: a session it opens is withdrawn with that key. */
    keyId: text("key_id").notNull(),
    /** The profile it opens; none for an `/oai` transcription session. */
    profileId: text("profile_id"),
    /** `/oai` only: the OpenAI session settings the secret was minted with (JSON), applied when it is used. */
    session: text("session"),
    expiresAt: ms("expires_at").notNull(),
    usedAt: ms("used_at"),
  },
  (t) => [index("realtime_client_secrets_expires_idx").on(t.expiresAt)],
);

/** Phone numbers pointed at a profile (docs/telephony.md): the webhook's token (hashed) and the carrier's credential its signatures are checked with. */
export const realtimePhoneLinks = pgTable(
  "realtime_phone_links",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    /** The key that made it: the calls' credentials are minted on it, so revoking the key silences the link. */
    keyId: text("key_id").notNull(),
    profileId: text("profile_id").notNull(),
    /** `twilio` or `telnyx`. */
    carrier: text("carrier").notNull(),
    /** SHA-256 of the token in the webhook URL, hex. */
    tokenHash: text("token_hash").notNull(),
    /** Twilio's auth token or Telnyx's public key: kept to check signatures, never returned. */
    credential: text("credential").notNull(),
    createdAt: ms("created_at").notNull(),
    revokedAt: ms("revoked_at"),
  },
  (t) => [uniqueIndex("realtime_phone_links_token_idx").on(t.tokenHash), index("realtime_phone_links_profile_idx").on(t.tenantId, t.profileId)],
);

/** Voices a tenant cloned through a provider's API (docs/voices.md#cloned-voices); only the tenant sees and uses them. */
export const customVoices = pgTable(
  "custom_voices",
  {
    /** The voice id clients use: the provider's own id for it. */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    keyId: text("key_id").notNull(),
    provider: text("provider").notNull(),
    /** The model it was cloned for (its canonical slug), when the client named one. */
    model: text("model"),
    name: text("name").notNull(),
    description: text("description"),
    language: text("language"),
    /** `processing`, `active`, `failed` or `deleting`. */
    status: text("status").notNull(),
    failureReason: text("failure_reason"),
    feeCredits: integer("fee_credits").notNull(),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
  },
  (t) => [index("custom_voices_tenant_idx").on(t.tenantId, t.createdAt)],
);

/**
 * When the voice catalogue first and last saw each provider's voice of a model (src/voices/):
 * `first_seen_at` survives restarts and is shared by instances; `last_seen_at` moves on with each
 * refresh that finds the voice in its provider's list.
 */
export const voiceSightings = pgTable(
  "voice_sightings",
  {
    provider: text("provider").notNull(),
    /** The model's canonical slug. */
    model: text("model").notNull(),
    voice: text("voice").notNull(),
    firstSeenAt: ms("first_seen_at").notNull(),
    lastSeenAt: ms("last_seen_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.model, t.voice] })],
);

/**
 * Pronunciation dictionaries (docs/pronunciation.md), per tenant: each change of the rules makes a
 * new version, kept so a locator naming an older version still finds its rules.
 */
export const pronunciationDictionaries = pgTable(
  "pronunciation_dictionaries",
  {
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    name: text("name").notNull(),
    description: text("description"),
    latestVersionId: text("latest_version_id").notNull(),
    createdAt: ms("created_at").notNull(),
    archivedAt: ms("archived_at"),
  },
  (t) => [index("pronunciation_dictionaries_tenant_idx").on(t.tenantId, t.createdAt)],
);

/** One version of a dictionary's rules. */
export const pronunciationDictionaryVersions = pgTable(
  "pronunciation_dictionary_versions",
  {
    id: text("id").primaryKey(),
    dictionaryId: text("dictionary_id")
      .notNull()
      .references(() => pronunciationDictionaries.id),
    /** JSON: the rules in order, as ElevenLabs' API writes them (`{type, string_to_replace, alias | phoneme, alphabet, case_sensitive, word_boundaries}`). */
    rules: text("rules").notNull(),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [index("pronunciation_dictionary_versions_dictionary_idx").on(t.dictionaryId)],
);
