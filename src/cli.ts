// Operator command line. Run `bun run cli help` for the commands.
import { parseArgs } from "node:util";
import { createKey } from "./accounts/keys.ts";
import { listKeys, revokeKeys, setTenantDisabled, tenantByName } from "./accounts/tenants.ts";
import { loadConfig } from "./config.ts";
import { openDatabase, type Database } from "./db/open.ts";
import { creditsOfUsd } from "./ledger/amounts.ts";
import { Ledger } from "./ledger/ledger.ts";
import type { GrantTarget } from "./ledger/sources.ts";

const USAGE = `usage: bun run cli <command>
  keys create --tenant NAME                 create the tenant if needed; print a new key on the last line
  keys list --tenant NAME                   list the tenant's keys (prefix only)
  keys revoke --tenant NAME --prefix P      revoke the tenant's keys with that prefix
  credits add --tenant NAME --usd X         add paid credits (an adjustment)
  credits grant --tenant NAME --usd X --name GRANT [--expires RFC3339 | --days N] [--target PROVIDER/MODEL ...]
                                            add promotional credits, optionally limited to targets
  tenants disable --tenant NAME             refuse the tenant's keys (403 tenant_disabled)
  tenants enable --tenant NAME`;

class UsageError extends Error {}

const required = (value: string | undefined, flag: string) => {
  if (!value?.trim()) throw new UsageError(`--${flag} is required`);
  return value.trim();
};

async function tenantId(database: Database, name: string): Promise<string> {
  const t = await tenantByName(database, name);
  if (!t) throw new UsageError(`no tenant named "${name}"`);
  return t.id;
}

function target(spec: string): GrantTarget {
  const slash = spec.indexOf("/");
  if (slash <= 0 || slash === spec.length - 1) throw new UsageError(`--target takes PROVIDER/MODEL, got "${spec}"`);
  return { provider: spec.slice(0, slash), model: spec.slice(slash + 1) };
}

function expiry(expires: string | undefined, days: string | undefined): Date | null {
  if (expires) {
    const d = new Date(expires);
    if (Number.isNaN(d.getTime())) throw new UsageError(`--expires is not a timestamp: "${expires}"`);
    return d;
  }
  if (days) {
    const n = Number(days);
    if (!(n > 0)) throw new UsageError(`--days must be a positive number`);
    return new Date(Date.now() + n * 86_400_000);
  }
  return null;
}

async function run(argv: string[], database: Database): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tenant: { type: "string" },
      prefix: { type: "string" },
      usd: { type: "string" },
      name: { type: "string" },
      expires: { type: "string" },
      days: { type: "string" },
      target: { type: "string", multiple: true },
    },
  });
  const command = positionals.join(" ");
  const ledger = new Ledger(database);
  switch (command) {
    case "keys create": {
      const tenant = required(values.tenant, "tenant");
      const { key, tenantId } = await createKey(database, tenant);
      console.log(`created a key for tenant "${tenant}" (${tenantId}); it is shown once, store it now:`);
      console.log(key);
      return;
    }
    case "keys list": {
      for (const k of await listKeys(database, await tenantId(database, required(values.tenant, "tenant")))) {
        console.log(`${k.prefix}…  created ${k.createdAt.toISOString()}${k.revokedAt ? `  revoked ${k.revokedAt.toISOString()}` : ""}`);
      }
      return;
    }
    case "keys revoke": {
      const n = await revokeKeys(database, await tenantId(database, required(values.tenant, "tenant")), required(values.prefix, "prefix"));
      console.log(`revoked ${n} key(s)`);
      if (n === 0) process.exitCode = 1;
      return;
    }
    case "credits add": {
      const credits = creditsOfUsd(required(values.usd, "usd"));
      await ledger.credit(await tenantId(database, required(values.tenant, "tenant")), { credits, type: "adjustment", description: `operator added ${values.usd} USD` });
      console.log(`added ${credits} paid credits`);
      return;
    }
    case "credits grant": {
      const credits = creditsOfUsd(required(values.usd, "usd"));
      const name = required(values.name, "name");
      const grant = { name, expiresAt: expiry(values.expires, values.days), targets: (values.target ?? []).map(target) };
      await ledger.credit(await tenantId(database, required(values.tenant, "tenant")), { credits, type: "grant", description: `promotional grant "${name}"`, grant });
      console.log(`granted ${credits} promotional credits ("${name}")`);
      return;
    }
    case "tenants disable":
    case "tenants enable": {
      await setTenantDisabled(database, await tenantId(database, required(values.tenant, "tenant")), command === "tenants disable");
      console.log(`tenant ${command === "tenants disable" ? "disabled" : "enabled"}`);
      return;
    }
    default:
      throw new UsageError(command === "help" ? "" : `unknown command "${command}"`);
  }
}

async function main(argv: string[]): Promise<number> {
  const database = await openDatabase(loadConfig(process.env).databaseUrl);
  try {
    await run(argv, database);
    return process.exitCode === 1 ? 1 : 0;
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      if ((err as Error).message) console.error((err as Error).message);
      console.error(USAGE);
      return 2;
    }
    if (err instanceof Error && /USD is not a whole number|not a non-negative decimal/.test(err.message)) {
      console.error(err.message);
      return 2;
    }
    throw err;
  } finally {
    await database.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
