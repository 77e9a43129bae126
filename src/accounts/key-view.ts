import type { Database } from "../db/open.ts";
import { ApiError } from "../errors.ts";
import { noteRequest } from "../request-context.ts";
import { SingleFlight } from "../util/single-flight.ts";
import { type PrincipalLimits, readLimits } from "../limits/types.ts";
import { hashKey, type Principal } from "./keys.ts";

// The keys this instance served lately, by hash, so that a request is authenticated without a
// database round trip. Every access-check interval (ACCESS_CHECK_INTERVAL_MS, the one that ends
// open sessions of a withdrawn key) all of them are read again in one query: a key revoked or a
// tenant disabled by any process is refused from the next check on, as open sessions are ended.
// A key not seen before, or one the checks could not confirm lately (the database failing), is
// read on the request's path. Unknown keys are not kept: a key minted a moment ago works at once.

const KEY_COLUMNS =
  "api_keys.hash AS hash, api_keys.id AS key_id, api_keys.prefix AS key_prefix, tenants.id AS tenant_id, tenants.name AS tenant_name, tenants.disabled AS disabled, tenants.limits AS tenant_limits, api_keys.limits AS key_limits FROM api_keys JOIN tenants ON tenants.id = api_keys.tenant_id";
/** Hashes read again per statement: well under every dialect's limit on bound parameters. */
const CHECK_BATCH = 1000;
/** Keys not used for this many checks are dropped from the view. */
const UNUSED_CHECKS = 30;

interface KeyRow {
  hash: string;
  key_id: string;
  key_prefix: string;
  tenant_id: string;
  tenant_name: string;
  /** Boolean on PostgreSQL, 0 or 1 on SQLite. */
  disabled: boolean | number;
  tenant_limits: string | null;
  key_limits: string | null;
  /** The two columns parsed, once per read of the row. */
  limits?: PrincipalLimits;
}

interface Entry {
  row: KeyRow;
  /** `performance.now()` when the database last said this. */
  checkedAt: number;
  usedAt: number;
}

export class KeyView {
  private readonly entries = new Map<string, Entry>();
  private readonly reads = new SingleFlight<string, KeyRow | undefined>();
  private timer: Timer | undefined;
  private checking: Promise<void> | undefined;
  private readonly checkedListeners: (() => boolean)[] = [];

  constructor(
    private readonly database: Database,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.checking ??= this.check().finally(() => (this.checking = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
  }

  /** Who the key belongs to (noted on the request being served, for its log line); 401 for a missing or unknown key, 403 for a disabled tenant. */
  async authenticate(key: string | undefined): Promise<Principal> {
    if (!key) throw new ApiError("missing_api_key", "an API key is required");
    const hash = hashKey(key);
    const now = performance.now();
    const entry = this.entries.get(hash);
    // Trusted while the checks keep it current: a check under way or a failed one leaves it at most two intervals old.
    const row = entry && now - entry.checkedAt <= 2 * this.intervalMs ? entry.row : await this.read(hash);
    if (!row) throw new ApiError("invalid_api_key", "the API key is not valid");
    if (row.disabled) throw new ApiError("tenant_disabled", "this account is disabled");
    const kept = this.entries.get(hash);
    if (kept) kept.usedAt = now;
    row.limits ??= { tenant: readLimits(row.tenant_limits), key: readLimits(row.key_limits) };
    const principal = { tenantId: row.tenant_id, tenantName: row.tenant_name, keyId: row.key_id, keyPrefix: row.key_prefix, limits: row.limits };
    noteRequest({ tenantId: principal.tenantId, keyPrefix: principal.keyPrefix });
    return principal;
  }

  /** This process withdrew the tenant's keys (a revocation, a disabling): they are read afresh on their next use. */
  forgetTenant(tenantId: string): void {
    for (const [hash, entry] of this.entries) if (entry.row.tenant_id === tenantId) this.entries.delete(hash);
  }

  /** Resolves once a check that starts after this call is over (tests wait on it instead of on time). */
  nextCheck(): Promise<void> {
    return new Promise((resolve) => {
      let seen = 0;
      // The check under way (if any) may have read before the change the caller waits for: the one after it counts.
      const skip = this.checking ? 1 : 0;
      this.checkedListeners.push(() => {
        if (seen++ < skip) return false;
        resolve();
        return true;
      });
    });
  }

  private async read(hash: string): Promise<KeyRow | undefined> {
    const checkedAt = performance.now();
    const row = await this.reads.get(hash, async () => (await this.database.sql.query<KeyRow>(`SELECT ${KEY_COLUMNS} WHERE api_keys.hash = ? AND api_keys.revoked_at IS NULL`, [hash]))[0]);
    if (row) this.entries.set(hash, { row, checkedAt, usedAt: checkedAt });
    return row;
  }

  private async check(): Promise<void> {
    const startedAt = performance.now();
    for (const [hash, entry] of this.entries) if (startedAt - entry.usedAt > UNUSED_CHECKS * this.intervalMs) this.entries.delete(hash);
    const hashes = [...this.entries.keys()];
    try {
      for (let i = 0; i < hashes.length; i += CHECK_BATCH) {
        const batch = hashes.slice(i, i + CHECK_BATCH);
        const rows = await this.database.sql.query<KeyRow>(`SELECT ${KEY_COLUMNS} WHERE api_keys.hash IN (${batch.map(() => "?").join(", ")}) AND api_keys.revoked_at IS NULL`, batch);
        const live = new Map(rows.map((r) => [r.hash, r]));
        for (const hash of batch) {
          const row = live.get(hash);
          const entry = this.entries.get(hash);
          if (!entry) continue;
          // A key read on a request's path after this check began is at least as current as this answer.
          if (entry.checkedAt > startedAt) continue;
          if (row) Object.assign(entry, { row, checkedAt: startedAt });
          else this.entries.delete(hash);
        }
      }
    } catch {
      // The entries age: past two intervals unconfirmed, requests read their key themselves.
    }
    for (const listener of this.checkedListeners.splice(0)) if (!listener()) this.checkedListeners.push(listener);
  }
}
