import type { parseArgs } from "node:util";
import { createKeyIn } from "../accounts/keys.ts";
import { listOwnKeys } from "../accounts/own-keys.ts";
import { listTenants, revokeKeys, setTenantDisabled, tenantByName } from "../accounts/tenants.ts";
import type { Database } from "../db/open.ts";
import { dailyUsage } from "../ledger/activity.ts";
import { CREDITS_PER_USD, creditsOfUsd, MAX_CREDIT_USD } from "../ledger/amounts.ts";
import { balanceView } from "../ledger/balance.ts";
import type { Ledger } from "../ledger/ledger.ts";
import type { GrantTarget } from "../ledger/sources.ts";
import type { Limits } from "../limits/types.ts";
import { creditsText, usdText } from "./amounts.ts";
import { NotFoundError, UsageError } from "./errors.ts";
import { table } from "./table.ts";

/** How the operator runs this CLI: from a checkout, or as the single executable (`bun run build`) given arguments. */
export const CLI = Bun.isStandaloneExecutable ? "voxroute" : "bun run cli";

type Options = NonNullable<Parameters<typeof parseArgs>[0]>["options"];
export type Values = Record<string, string | string[] | boolean | undefined>;

export interface CommandContext {
  database: Database;
  ledger: Ledger;
  /** What a tenant made here starts with (DEFAULT_TENANT_*). */
  newTenantLimits: Limits;
  print(line: string): void;
}

export interface Command {
  name: string;
  /** Its flags as the usage line shows them. */
  synopsis: string;
  summary: string;
  /** More about it, for `<command> --help`. */
  details?: string;
  options: Options;
  /** Runs without the database (its context has only `print`). */
  offline?: true;
  run(ctx: CommandContext, values: Values): Promise<void>;
}

export const TENANT = { tenant: { type: "string" } } as const;
export const JSON_FLAG = { json: { type: "boolean" } } as const;
const DAY_MS = 86_400_000;

export const required = (values: Values, flag: string): string => {
  const value = values[flag];
  if (typeof value !== "string" || !value.trim()) throw new UsageError(`--${flag} is required`);
  return value.trim();
};

/** USD as credits; a malformed, zero or too large amount is the caller's mistake (exit 2), checked before anything is written. */
function usd(values: Values): number {
  const given = required(values, "usd");
  let credits: number;
  try {
    credits = creditsOfUsd(given);
  } catch (err) {
    throw new UsageError(`--usd: ${(err as Error).message}`);
  }
  if (credits <= 0) throw new UsageError(`--usd must be more than 0, got ${given}`);
  if (credits > MAX_CREDIT_USD * CREDITS_PER_USD) throw new UsageError(`--usd must be at most ${MAX_CREDIT_USD.toLocaleString("en-US")}, got ${given}`);
  return credits;
}

export async function tenantId({ database }: CommandContext, values: Values): Promise<string> {
  const name = required(values, "tenant");
  const t = await tenantByName(database, name);
  if (!t) throw new NotFoundError(`no tenant named "${name}" (${CLI} tenants list)`);
  return t.id;
}

function positiveNumber(values: Values, flag: string): number | undefined {
  if (values[flag] === undefined) return undefined;
  const n = Number(values[flag]);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${flag} must be a positive number`);
  return n;
}

function target(spec: string): GrantTarget {
  const slash = spec.indexOf("/");
  if (slash <= 0 || slash === spec.length - 1) throw new UsageError(`--target takes PROVIDER/MODEL, got "${spec}"`);
  return { provider: spec.slice(0, slash), model: spec.slice(slash + 1) };
}

function expiry(values: Values): Date | null {
  const expires = values.expires as string | undefined;
  if (expires) {
    const d = new Date(expires);
    if (Number.isNaN(d.getTime())) throw new UsageError(`--expires is not a timestamp: "${expires}"`);
    return d;
  }
  const days = positiveNumber(values, "days");
  return days ? new Date(Date.now() + days * DAY_MS) : null;
}

export const json = (ctx: CommandContext, value: unknown) => ctx.print(JSON.stringify(value, null, 2));

export const COMMANDS: Command[] = [
  {
    name: "tenants list",
    synopsis: "[--json]",
    summary: "every tenant with its paid balance",
    options: JSON_FLAG,
    async run(ctx, values) {
      const tenants = await listTenants(ctx.database);
      if (values.json) return json(ctx, tenants);
      if (!tenants.length) return ctx.print(`no tenants yet (${CLI} keys create --tenant NAME)`);
      ctx.print(
        table(
          ["name", "id", "e-mail", "state", "created", "paid balance"],
          tenants.map((t) => [t.name, t.id, t.email ?? "-", t.disabled ? "disabled" : "enabled", t.createdAt.toISOString(), creditsText(t.paidCredits)]),
        ),
      );
    },
  },
  {
    name: "balance",
    synopsis: "--tenant NAME [--json]",
    summary: "paid and promotional credits, grants with their targets and expiry",
    options: { ...TENANT, ...JSON_FLAG },
    async run(ctx, values) {
      const view = await balanceView(ctx.ledger, await tenantId(ctx, values));
      if (values.json) return json(ctx, view);
      ctx.print(`state:        ${view.state}`);
      ctx.print(`paid:         ${creditsText(view.paid_credits)}, of which spendable ${creditsText(view.spendable_paid_credits)}`);
      ctx.print(`promotional:  ${creditsText(view.promotional_credits)}`);
      if (!view.promotion_grants.length) return;
      const targets = (g: (typeof view.promotion_grants)[number]) => (g.targets.length ? g.targets.map((t) => `${t.provider}/${t.model}`).join(" ") : "any");
      ctx.print(
        table(
          ["grant", "remaining", "expires", "targets", "eligible"],
          view.promotion_grants.map((g) => [g.name, creditsText(g.remaining_credits), g.expires_at ?? "never", targets(g), g.eligible ? "yes" : "no"]),
        ),
      );
    },
  },
  {
    name: "usage",
    synopsis: "--tenant NAME [--days N] [--json]",
    summary: "daily usage per API key over the last N days (default 30, today included, UTC)",
    options: { ...TENANT, days: { type: "string" }, ...JSON_FLAG },
    async run(ctx, values) {
      const days = Math.ceil(positiveNumber(values, "days") ?? 30);
      const today = Date.parse(`${new Date().toISOString().slice(0, 10)}T00:00:00Z`);
      const rows = await dailyUsage(ctx.database, await tenantId(ctx, values), new Date(today - (days - 1) * DAY_MS), new Date(today + DAY_MS));
      if (values.json) return json(ctx, rows);
      if (!rows.length) return ctx.print(`no requests in the last ${days} day(s)`);
      const total = rows.reduce((n, r) => n + r.credits, 0);
      ctx.print(
        table(
          ["date", "key", "requests", "failed", "characters", "audio seconds", "cost"],
          rows.map((r) => [r.date, r.api_key?.prefix ?? "-", String(r.requests), String(r.failed), String(r.characters), r.seconds.toFixed(1), creditsText(r.credits)]),
        ),
      );
      ctx.print(`total: ${creditsText(total)}`);
    },
  },
  {
    name: "keys create",
    synopsis: "--tenant NAME [--usd N]",
    summary: "a new key (the tenant is created if needed), funded with N USD of paid credits",
    details: "The key is printed once, on the last line of output; only its prefix is stored.",
    options: { ...TENANT, usd: { type: "string" } },
    async run(ctx, values) {
      const name = required(values, "tenant");
      const credits = values.usd === undefined ? 0 : usd(values);
      // One transaction: a credit that fails leaves no key behind that nobody was shown.
      const { key, tenantId } = await ctx.ledger.withCredits(async (tx, credit) => {
        const made = await createKeyIn(tx, name, ctx.newTenantLimits);
        if (credits) await credit(made.tenantId, { credits, type: "adjustment", description: `operator funded a new key with ${usdText(credits)}` });
        return made;
      });
      ctx.print(`created a key for tenant "${name}" (${tenantId})${credits ? ` and added ${creditsText(credits)}` : ""}; it is shown once, store it now:`);
      ctx.print(key);
    },
  },
  {
    name: "keys list",
    synopsis: "--tenant NAME",
    summary: "the tenant's keys by prefix only, newest first, with their last use in the last 90 days",
    options: TENANT,
    async run(ctx, values) {
      const keys = await listOwnKeys(ctx.database, await tenantId(ctx, values));
      if (!keys.length) return ctx.print("no keys");
      ctx.print(
        table(
          ["prefix", "created", "revoked", "last used"],
          keys.map((k) => [`${k.prefix}…`, k.created_at, k.revoked_at ?? "-", k.last_used_at ?? "-"]),
        ),
      );
    },
  },
  {
    name: "keys revoke",
    synopsis: "--tenant NAME --prefix P",
    summary: "revoke the tenant's live keys with that prefix (their open sessions end too)",
    options: { ...TENANT, prefix: { type: "string" } },
    async run(ctx, values) {
      const id = await tenantId(ctx, values);
      const prefix = required(values, "prefix");
      const n = await revokeKeys(ctx.database, id, prefix);
      if (n === 0) throw new NotFoundError(`no live key with prefix ${prefix}`);
      ctx.print(`revoked ${n} key(s)`);
    },
  },
  {
    name: "credits add",
    synopsis: "--tenant NAME --usd N",
    summary: "add paid credits (an adjustment)",
    options: { ...TENANT, usd: { type: "string" } },
    async run(ctx, values) {
      const credits = usd(values);
      await ctx.ledger.credit(await tenantId(ctx, values), { credits, type: "adjustment", description: `operator added ${usdText(credits)}` });
      ctx.print(`added ${creditsText(credits)} of paid credits`);
    },
  },
  {
    name: "credits grant",
    synopsis: "--tenant NAME --usd N --name GRANT [--expires RFC3339 | --days N] [--target PROVIDER/MODEL ...]",
    summary: "add promotional credits, optionally expiring and limited to targets",
    options: { ...TENANT, usd: { type: "string" }, name: { type: "string" }, expires: { type: "string" }, days: { type: "string" }, target: { type: "string", multiple: true } },
    async run(ctx, values) {
      const credits = usd(values);
      const name = required(values, "name");
      const grant = { name, expiresAt: expiry(values), targets: ((values.target as string[] | undefined) ?? []).map(target) };
      await ctx.ledger.credit(await tenantId(ctx, values), { credits, type: "grant", description: `promotional grant "${name}"`, grant });
      ctx.print(`granted ${creditsText(credits)} of promotional credits ("${name}"${grant.expiresAt ? `, expiring ${grant.expiresAt.toISOString()}` : ""})`);
    },
  },
  ...(["disable", "enable"] as const).map(
    (verb): Command => ({
      name: `tenants ${verb}`,
      synopsis: "--tenant NAME",
      summary: verb === "disable" ? "refuse the tenant's keys (403 tenant_disabled; open sessions end)" : "accept the tenant's keys again",
      options: TENANT,
      async run(ctx, values) {
        await setTenantDisabled(ctx.database, await tenantId(ctx, values), verb === "disable");
        ctx.print(`tenant ${verb}d`);
      },
    }),
  ),
];
