import { createHmac, randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import { and, desc, eq, gte, isNull, sql } from "drizzle-orm";
import type { Database } from "../db/open.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { creditsOfUsd } from "../ledger/amounts.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { GrantTarget } from "../ledger/sources.ts";
import type { Limits } from "../limits/types.ts";
import { ensureTenant, mintKey, newId } from "./keys.ts";
import type { Mailer } from "./mailer.ts";

// Signup by e-mail code. A six-digit code lives five minutes, is stored only as a keyed hash
// (HMAC with a server secret kept in the database, so a leaked table cannot be brute-forced
// offline), is used once, and dies after a few wrong tries. Codes per address and per client
// address are rate limited, so the 10^6 code space cannot be searched online either.

export const CODE_TTL_SECONDS = 300;

export interface SignupLimits {
  /** Wrong tries before a code is void. */
  attemptsPerCode: number;
  /** Codes one address may be sent per window. */
  codesPerAddress: number;
  /** Codes one client address may ask for per window. */
  codesPerIp: number;
  windowMs: number;
}

export const DEFAULT_SIGNUP_LIMITS: SignupLimits = { attemptsPerCode: 5, codesPerAddress: 3, codesPerIp: 10, windowMs: 15 * 60_000 };

export interface Welcome {
  credits: number;
  days: number;
  targets: GrantTarget[];
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function normalizeEmail(value: unknown): string {
  if (typeof value !== "string") throw new ApiError("invalid_request", "email must be a string", { param: "email" });
  const email = value.trim().toLowerCase();
  if (email.length > 254 || !EMAIL.test(email)) throw new ApiError("invalid_request", "email is not a valid address", { param: "email" });
  return email;
}

const tooMany = (what: string, retryAfterSeconds: number) => new ApiError("invalid_request", `too many ${what}; try again later`, { retry_after: retryAfterSeconds }, 429);

export interface SignupDeps {
  database: Database;
  ledger: Ledger;
  mailer: Mailer;
  log: Logger;
  welcome: Welcome;
  /** What a new account's limits start as (DEFAULT_TENANT_*). */
  tenantLimits?: Limits;
  limits?: SignupLimits;
  now?: () => Date;
}

export class Signup {
  private secret: Promise<Buffer> | undefined;
  private readonly limits: SignupLimits;
  private readonly now: () => Date;

  constructor(private readonly deps: SignupDeps) {
    this.limits = deps.limits ?? DEFAULT_SIGNUP_LIMITS;
    this.now = deps.now ?? (() => new Date());
  }

  /** The HMAC key, created once and shared by every instance through the database. */
  private key(): Promise<Buffer> {
    const secret = (this.secret ??= (async () => {
      const { database } = this.deps;
      const s = database.schema.settings;
      await database.transaction((tx) =>
        tx
          .insert(s)
          .values({ key: "signup_code_secret", value: randomBytes(32).toString("hex") })
          .onConflictDoNothing(),
      );
      const [row] = await database.db.select().from(s).where(eq(s.key, "signup_code_secret"));
      return Buffer.from(row.value, "hex");
    })());
    secret.catch(() => (this.secret = undefined)); // a passing database error is retried next time
    return secret;
  }

  private async hash(email: string, code: string): Promise<Buffer> {
    return createHmac("sha256", await this.key())
      .update(`${email}\n${code}`)
      .digest();
  }

  /** Sends a new code to the address (new or existing account); older codes for it stop working. */
  async request(emailInput: unknown, ip: string): Promise<{ success: true; expiresIn: number }> {
    const email = normalizeEmail(emailInput);
    const { database } = this.deps;
    const c = database.schema.emailCodes;
    const now = this.now();
    const since = new Date(now.getTime() - this.limits.windowMs);
    const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
    const codeHash = (await this.hash(email, code)).toString("hex");

    await database.transaction(async (tx) => {
      // Counting then inserting must not race between requests (or instances): take a lock row.
      await tx.insert(database.schema.settings).values({ key: "signup_lock", value: "" }).onConflictDoNothing();
      await tx.update(database.schema.settings).set({ value: "" }).where(eq(database.schema.settings.key, "signup_lock"));
      const byAddress = await tx
        .select({ id: c.id })
        .from(c)
        .where(and(eq(c.email, email), gte(c.createdAt, since)));
      if (byAddress.length >= this.limits.codesPerAddress) throw tooMany("codes for this address", Math.ceil(this.limits.windowMs / 1000));
      const byIp = await tx
        .select({ id: c.id })
        .from(c)
        .where(and(eq(c.ip, ip), gte(c.createdAt, since)));
      if (byIp.length >= this.limits.codesPerIp) throw tooMany("codes from this client", Math.ceil(this.limits.windowMs / 1000));
      await tx
        .update(c)
        .set({ consumedAt: now })
        .where(and(eq(c.email, email), isNull(c.consumedAt)));
      await tx.insert(c).values({ id: newId(), email, codeHash, ip, createdAt: now, expiresAt: new Date(now.getTime() + CODE_TTL_SECONDS * 1000) });
    });

    await this.deps.mailer.send({
      to: email,
      subject: `Your voxroute code: ${code}`,
      text: `Your voxroute sign-in code is ${code}\n\nIt works once, for five minutes. If you did not ask for it, ignore this message.`,
    });
    this.deps.log.info({ email }, "signup code sent");
    return { success: true, expiresIn: CODE_TTL_SECONDS };
  }

  /** Exchanges a valid code for a new API key, creating the account (with its welcome grant) if new. */
  async verify(emailInput: unknown, codeInput: unknown) {
    const email = normalizeEmail(emailInput);
    if (typeof codeInput !== "string" || !/^\d{6}$/.test(codeInput)) {
      throw new ApiError("invalid_request", "code must be the six digits that were sent", { param: "code" });
    }
    const offered = await this.hash(email, codeInput);
    const { database } = this.deps;
    const c = database.schema.emailCodes;
    const now = this.now();

    const outcome = await database.transaction(async (tx) => {
      const [active] = await tx
        .select()
        .from(c)
        .where(and(eq(c.email, email), isNull(c.consumedAt)))
        .orderBy(desc(c.createdAt))
        .limit(1);
      if (!active || active.expiresAt.getTime() <= now.getTime()) return "expired" as const;
      if (!timingSafeEqual(offered, Buffer.from(active.codeHash, "hex"))) {
        // Counted in one statement: parallel wrong guesses cannot all read the same count.
        const [counted] = await tx
          .update(c)
          .set({ attempts: sql`${c.attempts} + 1` })
          .where(and(eq(c.id, active.id), isNull(c.consumedAt)))
          .returning({ attempts: c.attempts });
        const voided = !counted || counted.attempts >= this.limits.attemptsPerCode;
        if (voided) await tx.update(c).set({ consumedAt: now }).where(eq(c.id, active.id));
        return voided ? ("voided" as const) : ("wrong" as const);
      }
      const used = await tx
        .update(c)
        .set({ consumedAt: now })
        .where(and(eq(c.id, active.id), isNull(c.consumedAt)))
        .returning({ id: c.id });
      return used.length ? ("ok" as const) : ("expired" as const);
    });

    if (outcome === "expired") throw new ApiError("invalid_request", "there is no valid code for this address; request a new one", { param: "code" });
    if (outcome === "voided") throw new ApiError("invalid_request", "too many wrong codes; this code is void, request a new one", { param: "code" });
    if (outcome === "wrong") throw new ApiError("invalid_request", "the code is not right", { param: "code" });

    const { tenantId, created } = await ensureTenant(database, email, email, this.deps.tenantLimits);
    // Every time: it happens once per account (keyed), also when a first attempt failed halfway.
    await this.welcome(tenantId);
    const { key, prefix } = await mintKey(database, tenantId);
    this.deps.log.info({ email, tenantId, created }, "signup verified; key issued");
    return { success: true, api_key: key, key_prefix: prefix, account_id: tenantId, new_account: created };
  }

  private async welcome(tenantId: string): Promise<void> {
    const { credits, days, targets } = this.deps.welcome;
    if (credits <= 0) return;
    await this.deps.ledger.credit(tenantId, {
      credits,
      type: "welcome",
      description: "welcome grant",
      externalId: `welcome:${tenantId}`,
      grant: { name: "welcome", expiresAt: new Date(this.now().getTime() + days * 86_400_000), targets },
    });
  }
}

export function welcomeFromConfig(usd: string, days: number, localProviders: string[]): Welcome {
  return { credits: creditsOfUsd(usd), days, targets: localProviders.map((provider) => ({ provider, model: "*" })) };
}
