// Operator command line: `bun run cli keys create --tenant NAME`.
import { parseArgs } from "node:util";
import { createKey } from "./accounts/keys.ts";
import { loadConfig } from "./config.ts";
import { openDatabase } from "./db/open.ts";

const USAGE = "usage: bun run cli keys create --tenant NAME";

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: { tenant: { type: "string" } } });
  const [group, action] = positionals;
  if (group !== "keys" || action !== "create") {
    console.error(USAGE);
    return 2;
  }
  const tenant = values.tenant?.trim();
  if (!tenant) {
    console.error(`--tenant is required\n${USAGE}`);
    return 2;
  }
  const database = await openDatabase(loadConfig().databaseUrl);
  try {
    const { key, tenantId } = await createKey(database, tenant);
    console.log(`created a key for tenant "${tenant}" (${tenantId}); it is shown once, store it now:`);
    console.log(key);
  } finally {
    await database.close();
  }
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
