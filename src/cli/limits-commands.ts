import { type LimitChanges, type LimitName, limitOfText, LooserThanTenant, writeLimits } from "../limits/limit-values.ts";
import { limitsReport } from "../limits/limits-report.ts";
import { LIMIT_NAMES, type Limits } from "../limits/types.ts";
import { type Command, type CommandContext, JSON_FLAG, json, TENANT, tenantId, type Values } from "./commands.ts";
import { NotFoundError, UsageError } from "./errors.ts";
import { table } from "./table.ts";

// `limits set` and `limits show` (docs/limits.md#setting-limits): a tenant's limits or one of its
// keys', and all of them with what was spent today and this month (UTC).

/** Each limit's flag: `--max-sessions` for `max_sessions`. */
const flagOf = (name: LimitName) => name.replaceAll("_", "-");

/** The changes the flags ask for, each checked before anything is written (exit 2 for a bad one). */
function changesOf(values: Values): LimitChanges {
  const changes: LimitChanges = {};
  for (const name of LIMIT_NAMES) {
    const given = values[flagOf(name)];
    if (typeof given !== "string") continue;
    try {
      changes[name] = limitOfText(name, given);
    } catch (err) {
      throw new UsageError(`--${flagOf(name)}: ${(err as Error).message}`);
    }
  }
  if (!Object.keys(changes).length) throw new UsageError(`name at least one limit: ${LIMIT_NAMES.map((n) => `--${flagOf(n)}`).join(", ")}`);
  return changes;
}

/** The tenant's live key with this prefix (`vxr_AbCdEfGh`, as `keys list` shows it, with or without the ellipsis). */
async function keyId(ctx: CommandContext, tenant: string, prefix: string): Promise<string> {
  const shown = prefix.replace(/…$/, "");
  const rows = await ctx.database.sql.query<{ id: string }>("SELECT id FROM api_keys WHERE tenant_id = ? AND prefix = ? AND revoked_at IS NULL", [tenant, shown]);
  if (!rows.length) throw new NotFoundError(`no live key with prefix ${shown}`);
  if (rows.length > 1) throw new UsageError(`several live keys start with ${shown}`);
  return rows[0]!.id;
}

const limitText = (limits: Limits, name: LimitName) => (limits[name] === undefined ? "none" : String(limits[name]));
const usd = (n: number) => n.toFixed(6);

export const LIMITS_COMMANDS: Command[] = [
  {
    name: "limits set",
    synopsis: "--tenant NAME [--key PREFIX] [--max-sessions N] [--requests-per-minute N] [--usd-per-day X] [--usd-per-month X]",
    summary: "set (or, with the value none, clear) the tenant's limits, or one of its keys'",
    details: "Counts are whole numbers, budgets USD with at most 6 decimals. A key's limit may not be above its tenant's. Servers apply the change within ACCESS_CHECK_INTERVAL_MS.",
    options: { ...TENANT, key: { type: "string" }, ...Object.fromEntries(LIMIT_NAMES.map((n) => [flagOf(n), { type: "string" as const }])) },
    async run(ctx, values) {
      const changes = changesOf(values);
      const tenant = await tenantId(ctx, values);
      const key = typeof values.key === "string" ? await keyId(ctx, tenant, values.key) : undefined;
      let limits: Limits;
      try {
        limits = await writeLimits(ctx.database.sql, tenant, key, changes);
      } catch (err) {
        if (err instanceof LooserThanTenant) throw new UsageError(`--${flagOf(err.limit)}: ${err.message}`);
        throw err;
      }
      ctx.print(`${key ? `key ${values.key}` : "tenant"} limits: ${LIMIT_NAMES.map((n) => `${n}=${limitText(limits, n)}`).join(" ")}`);
    },
  },
  {
    name: "limits show",
    synopsis: "--tenant NAME [--json]",
    summary: "the tenant's limits and each live key's, with spend today and this month (UTC)",
    options: { ...TENANT, ...JSON_FLAG },
    async run(ctx, values) {
      const report = await limitsReport(ctx.database, await tenantId(ctx, values));
      if (values.json) return json(ctx, report);
      const holders = [{ name: "tenant", ...report.tenant }, ...report.keys.map((k) => ({ name: `${k.prefix}…`, ...k }))];
      ctx.print(`spend of ${report.day} and ${report.month} (UTC); a key's limits apply inside its tenant's`);
      ctx.print(
        table(
          ["holder", ...LIMIT_NAMES, "spent today USD", "spent this month USD"],
          holders.map((h) => [h.name, ...LIMIT_NAMES.map((n) => limitText(h.limits, n)), usd(h.spent_today_usd), usd(h.spent_this_month_usd)]),
        ),
      );
    },
  },
];
