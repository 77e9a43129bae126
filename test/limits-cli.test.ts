import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// `limits set` and `limits show` as an operator runs them, in another process on a server's
// database (SQLite and PostgreSQL: the spend is one query of the activity records on both), and
// the operator's defaults for new tenants (DEFAULT_TENANT_*).

const CLI = new URL("../src/cli.ts", import.meta.url).pathname;

async function cli(args: string[], env: Record<string, string>) {
  const proc = Bun.spawn(["bun", CLI, ...args], { env: { ...process.env, LOG_LEVEL: "silent", ...env }, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, out, err };
}

const dialects = [
  { name: "SQLite", url: async () => ({ url: `sqlite://${join(tempDir("voxroute-limits-"), "db.sqlite")}`, drop: async () => {} }) },
  ...(postgresAvailable ? [{ name: "PostgreSQL", url: freshPostgres }] : []),
];

describe.each(dialects)("limits on $name", ({ url }) => {
  let server: TestServer;
  let env: Record<string, string>;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const made = await url();
    drop = made.drop;
    server = await startTestServer({ DATABASE_URL: made.url, ACCESS_CHECK_INTERVAL_MS: "200" });
    env = { DATABASE_URL: made.url };
  });
  afterAll(async () => {
    await server?.stop(0);
    await drop?.();
  });

  const show = async (tenant: string) => JSON.parse((await cli(["limits", "show", "--tenant", tenant, "--json"], env)).out);

  test("a new tenant starts with the operator's defaults; set changes one holder, none clears, show prints each with its spend", async () => {
    const tenant = `acme-${crypto.randomUUID()}`;
    const made = await cli(["keys", "create", "--tenant", tenant, "--usd", "1"], { ...env, DEFAULT_TENANT_USD_PER_DAY: "5", DEFAULT_TENANT_MAX_SESSIONS: "3" });
    expect(made.code).toBe(0);
    const key = made.out.trim().split("\n").at(-1)!;
    const prefix = key.slice(0, 12);
    expect((await show(tenant)).tenant.limits).toEqual({ max_sessions: 3, usd_per_day: 5 });

    const set = await cli(["limits", "set", "--tenant", tenant, "--key", prefix, "--usd-per-day", "0.5", "--max-sessions", "2", "--usd-per-month", "4"], env);
    expect(set).toMatchObject({ code: 0, err: "" });
    expect(set.out).toContain("usd_per_day=0.5");
    expect((await cli(["limits", "set", "--tenant", tenant, "--requests-per-minute", "600", "--max-sessions", "none"], env)).code).toBe(0);
    const report = await show(tenant);
    expect(report.tenant.limits).toEqual({ requests_per_minute: 600, usd_per_day: 5 });
    expect(report.keys).toEqual([expect.objectContaining({ prefix, limits: { max_sessions: 2, usd_per_day: 0.5, usd_per_month: 4 }, spent_today_usd: 0 })]);

    const table = (await cli(["limits", "show", "--tenant", tenant], env)).out;
    expect(table).toMatch(/^holder +max_sessions +requests_per_minute +usd_per_day +usd_per_month +spent today USD +spent this month USD$/m);
    expect(table).toMatch(/^tenant +none +600 +5 +none +0\.000000 +0\.000000$/m);
    expect(table).toMatch(new RegExp(`^${prefix}… +2 +none +0\\.5 +4 +0\\.000000 +0\\.000000$`, "m"));
  });

  test("bad values exit 2 and write nothing; an unknown tenant or key exits 3", async () => {
    const tenant = `t-${crypto.randomUUID()}`;
    const key = (await cli(["keys", "create", "--tenant", tenant], env)).out.trim().split("\n").at(-1)!;
    const prefix = key.slice(0, 12);
    for (const [flag, value, says] of [
      ["--usd-per-day", "abc", "usd_per_day must be a number"],
      ["--usd-per-day", "0.0000001", "at most 6 decimals"],
      ["--max-sessions", "1.5", "max_sessions must be a whole number"],
      ["--requests-per-minute", "", "requests_per_minute must be a number"],
    ] as const) {
      const bad = await cli(["limits", "set", "--tenant", tenant, flag, value], env);
      expect(bad.code).toBe(2);
      expect(bad.err).toContain(says);
    }
    expect((await cli(["limits", "set", "--tenant", tenant], env)).err).toContain("name at least one limit");
    expect((await cli(["limits", "set", "--tenant", tenant, "--usd-per-month", "10"], env)).code).toBe(0);
    const looser = await cli(["limits", "set", "--tenant", tenant, "--key", prefix, "--usd-per-month", "11"], env);
    expect(looser.code).toBe(2);
    expect(looser.err).toContain("may not be above its tenant's");
    expect(await show(tenant)).toMatchObject({ tenant: { limits: { usd_per_month: 10 } }, keys: [{ limits: {} }] });
    expect((await cli(["limits", "set", "--tenant", "nobody-at-all", "--max-sessions", "1"], env)).code).toBe(3);
    expect((await cli(["limits", "set", "--tenant", tenant, "--key", "vxr_nothing", "--max-sessions", "1"], env)).code).toBe(3);
  });

  test("show's spend is the ledger's; a budget set to it refuses the key's next request on the server within the access-check interval", async () => {
    const tenant = `s-${crypto.randomUUID()}`;
    const key = (await cli(["keys", "create", "--tenant", tenant, "--usd", "1"], env)).out.trim().split("\n").at(-1)!;
    const speech = () =>
      fetch(`${server.url}/oai/audio/speech`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "flite", voice: "slt", input: "Spend a little.", response_format: "pcm" }),
      });
    const res = await speech();
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const [{ credits }] = await server.ctx.database.sql.query<{ credits: unknown }>(
      "SELECT sum(credits) AS credits FROM activity JOIN tenants ON tenants.id = activity.tenant_id WHERE tenants.name = ?",
      [tenant],
    );
    const spent = Number(credits) / 1_000_000;
    expect(spent).toBeGreaterThan(0);
    const report = await show(tenant);
    expect(report.tenant).toMatchObject({ spent_today_usd: spent, spent_this_month_usd: spent });
    expect(report.keys[0]).toMatchObject({ spent_today_usd: spent, spent_this_month_usd: spent });

    expect((await cli(["limits", "set", "--tenant", tenant, "--key", key.slice(0, 12), "--usd-per-day", String(spent)], env)).code).toBe(0);
    await server.ctx.keys.nextCheck();
    const refused = await speech();
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ error: { code: "budget_exceeded" } });
  });
});
