import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { LiveSession, SessionRegistry } from "./registry.ts";

type Withdrawn = (keyIds: string[]) => Promise<Map<string, "invalid_api_key" | "tenant_disabled">>;

const MESSAGES = { invalid_api_key: "the API key was revoked", tenant_disabled: "this account was disabled" };

/**
 * Ends open sessions whose key was revoked or whose tenant was disabled, by whichever process did
 * it (the operator CLI, another server on the same database): every interval, the keys of the
 * open sessions are checked in one query, and the sessions of a withdrawn key end with 4401 / 4403.
 * Polling needs nothing beyond the database, on SQLite and PostgreSQL alike.
 */
export class AccessWatch {
  private readonly timer: Timer;
  private checking: Promise<void> | undefined;

  constructor(
    private readonly sessions: SessionRegistry,
    private readonly withdrawn: Withdrawn,
    intervalMs: number,
    private readonly log: Logger,
  ) {
    this.timer = setInterval(() => {
      this.checking ??= this.check().finally(() => (this.checking = undefined));
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops watching once a check under way is over. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.checking;
  }

  private async check(): Promise<void> {
    const byKey = new Map<string, LiveSession[]>();
    for (const session of this.sessions) {
      const keyId = session.payer?.keyId;
      if (!keyId || !session.end) continue;
      const ofKey = byKey.get(keyId);
      if (ofKey) ofKey.push(session);
      else byKey.set(keyId, [session]);
    }
    if (!byKey.size) return;
    let withdrawn: Awaited<ReturnType<Withdrawn>>;
    try {
      withdrawn = await this.withdrawn([...byKey.keys()]);
    } catch (err) {
      this.log.error({ err }, "checking open sessions' keys failed");
      return;
    }
    for (const [keyId, code] of withdrawn) {
      const ended = byKey.get(keyId) ?? [];
      this.log.info({ keyId, code, sessions: ended.length }, "ending the sessions of a withdrawn key");
      for (const session of ended) session.end!(new ApiError(code, MESSAGES[code]));
    }
  }
}
