import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type Database, openDatabase } from "../src/db/open.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// The operator CLI as an operator runs it: another process on the server's database.

const CLI = new URL("../src/cli.ts", import.meta.url).pathname;

async function cli(args: string[], env: Record<string, string> = {}, cwd?: string) {
  const proc = Bun.spawn(["bun", CLI, ...args], { cwd, env: { ...process.env, LOG_LEVEL: "silent", ...env }, stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, out, err };
}

describe("help", () => {
  test("--help on the CLI and on every command exits 0 and touches no database", async () => {
    const empty = tempDir("voxroute-cli-");
    const env = { DATABASE_URL: "" };
    const all = await cli(["--help"], env, empty);
    expect(all).toMatchObject({ code: 0, err: "" });
    const names = [...all.out.matchAll(/^ {2}([a-z]+(?: [a-z][a-z-]*)?) /gm)].map((m) => m[1]!);
    expect(names).toEqual(expect.arrayContaining(["tenants list", "balance", "usage", "keys create", "keys revoke", "credits add", "credits grant", "tls self-signed"]));
    expect(all.out).toContain("Exit codes");
    for (const name of names) {
      const own = await cli([...name.split(" "), "--help"], env, empty);
      expect(own).toMatchObject({ code: 0, err: "" });
      expect(own.out).toStartWith(`usage: bun run cli ${name}`);
    }
    expect((await cli(["help", "usage"], env, empty)).out).toStartWith("usage: bun run cli usage");
    expect((await cli(["keys", "-h"], env, empty)).out).toContain("keys revoke");
    expect(readdirSync(empty)).toEqual([]);
  });

  test("an unknown command or flag exits 2 with the usage on stderr, before the database", async () => {
    const empty = tempDir("voxroute-cli-");
    const unknown = await cli(["tenants", "purge"], { DATABASE_URL: "" }, empty);
    expect(unknown).toMatchObject({ code: 2, out: "" });
    expect(unknown.err).toContain('unknown command "tenants purge"');
    expect(unknown.err).toContain("tenants list");
    const flag = await cli(["balance", "--tenant", "x", "--colour"], { DATABASE_URL: "" }, empty);
    expect(flag.code).toBe(2);
    expect(flag.err).toContain("--colour");
    expect(readdirSync(empty)).toEqual([]);
  });
});

describe("on a server's database", () => {
  let server: TestServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    const url = `sqlite://${join(tempDir("voxroute-cli-"), "db.sqlite")}`;
    server = await startTestServer({ DATABASE_URL: url });
    env = { DATABASE_URL: url };
  });
  afterAll(() => server?.stop());

  test("keys create --usd funds the new key in one step; balance, usage and tenants list show amounts with units", async () => {
    const tenant = `acme-${crypto.randomUUID()}`;
    const made = await cli(["keys", "create", "--tenant", tenant, "--usd", "2.5"], env);
    expect(made).toMatchObject({ code: 0, err: "" });
    expect(made.out).toContain("2,500,000 credits (2.500000 USD)");
    const key = made.out.trim().split("\n").at(-1)!;

    const text = "Hello from the command line.";
    const res = await fetch(`${server.url}/oai/audio/speech`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "flite", voice: "slt", input: text, response_format: "pcm" }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();

    let usage: { requests: number; characters: number; credits: number; api_key: { prefix: string } }[] = [];
    for (let i = 0; i < 50 && !usage.length; i++, await Bun.sleep(50)) usage = JSON.parse((await cli(["usage", "--tenant", tenant, "--days", "1", "--json"], env)).out);
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ requests: 1, characters: text.length });
    expect(key.startsWith(usage[0]!.api_key.prefix)).toBe(true);
    const spent = usage[0]!.credits;
    expect(spent).toBeGreaterThan(0);

    const balance = await cli(["balance", "--tenant", tenant, "--json"], env);
    expect(JSON.parse(balance.out)).toMatchObject({ paid_credits: 2_500_000 - spent, state: "ok" });
    // keys list says what GET /account/keys says: the key by prefix, not revoked, and when it was last used.
    const keys = (await cli(["keys", "list", "--tenant", tenant], env)).out;
    expect(keys).toMatch(new RegExp(`^${key.slice(0, 12)}… +\\S+ +- +\\d{4}-\\d\\d-\\d\\dT\\S+Z$`, "m"));

    const shown = [(await cli(["balance", "--tenant", tenant], env)).out, (await cli(["usage", "--tenant", tenant], env)).out];
    expect(shown[0]).toContain(`${(2_500_000 - spent).toLocaleString("en-US")} credits (`);
    expect(shown[1]).toMatch(/^total: [\d,]+ credits \(\d+\.\d{6} USD\)$/m);
    // No amount is a bare number: every line ends in a unit or a word.
    expect(shown[0]).not.toMatch(/\d\s*$/m);

    const tenants = await cli(["tenants", "list"], env);
    const row = tenants.out.split("\n").find((l) => l.startsWith(tenant))!;
    expect(row).toContain(`${(2_500_000 - spent).toLocaleString("en-US")} credits (`);
  });

  test("a tenant or key that does not exist exits 3; a malformed amount exits 2 and writes nothing", async () => {
    expect((await cli(["balance", "--tenant", "nobody-at-all"], env)).code).toBe(3);
    const tenant = `t-${crypto.randomUUID()}`;
    expect((await cli(["keys", "create", "--tenant", tenant], env)).code).toBe(0);
    expect((await cli(["keys", "revoke", "--tenant", tenant, "--prefix", "vxr_nothing"], env)).code).toBe(3);
    const bad = await cli(["keys", "create", "--tenant", `other-${tenant}`, "--usd", "1.0000001"], env);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--usd");
    expect((await cli(["tenants", "list"], env)).out).not.toContain(`other-${tenant}`);
    expect((await cli(["credits", "add", "--tenant", tenant, "--usd", "0"], env)).code).toBe(2);
  });

  test("credits grant prints what it granted, and balance shows the grant's targets and expiry", async () => {
    const tenant = `g-${crypto.randomUUID()}`;
    await cli(["keys", "create", "--tenant", tenant], env);
    const granted = await cli(["credits", "grant", "--tenant", tenant, "--usd", "1", "--name", "launch", "--days", "30", "--target", "flite/*"], env);
    expect(granted).toMatchObject({ code: 0, err: "" });
    expect(granted.out).toContain("1,000,000 credits (1.000000 USD)");
    const balance = (await cli(["balance", "--tenant", tenant], env)).out;
    expect(balance).toMatch(/^launch +1,000,000 credits \(1\.000000 USD\) +\d{4}-\d\d-\d\dT[\d:.]+Z +flite\/\* +yes$/m);
  });
});

/** Statements that make every credit fail, as a database refusing the write would. */
const REFUSE_CREDITS = {
  sqlite: ["CREATE TRIGGER refuse_credits BEFORE INSERT ON credit_transactions BEGIN SELECT RAISE(ABORT, 'credits refused by the test'); END"],
  postgres: [
    "CREATE FUNCTION refuse_credits() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'credits refused by the test'; END $$",
    "CREATE TRIGGER refuse_credits BEFORE INSERT ON credit_transactions FOR EACH ROW EXECUTE FUNCTION refuse_credits()",
  ],
};

function fundedKeySuite(name: "sqlite" | "postgres", skip: boolean) {
  describe.skipIf(skip)(`keys create --usd on ${name}: the key and its credit are one step`, () => {
    let env: Record<string, string>;
    let database: Database;
    let drop: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      const made = name === "postgres" ? await freshPostgres() : { url: `sqlite://${join(tempDir("voxroute-cli-"), "db.sqlite")}`, drop: undefined };
      env = { DATABASE_URL: made.url };
      drop = made.drop;
      database = await openDatabase(made.url);
    });
    afterAll(async () => {
      await database?.close();
      await drop?.();
    });

    const left = async (tenant: string) => {
      const [row] = await database.sql.query<{ tenants: unknown; keys: unknown }>(
        "SELECT (SELECT count(*) FROM tenants WHERE name = ?) AS tenants, (SELECT count(*) FROM api_keys JOIN tenants ON tenants.id = api_keys.tenant_id WHERE tenants.name = ?) AS keys",
        [tenant, tenant],
      );
      return { tenants: Number(row!.tenants), keys: Number(row!.keys) };
    };

    test("an amount past 1,000,000 USD is refused (exit 2) before anything is written, by every command that takes one; 1,000,000 is taken", async () => {
      const tenant = `big-${crypto.randomUUID()}`;
      const refused = await cli(["keys", "create", "--tenant", tenant, "--usd", "100000000000000000000000"], env);
      expect(refused).toMatchObject({ code: 2, out: "" });
      expect(refused.err).toContain("--usd must be at most 1,000,000");
      expect(await left(tenant)).toEqual({ tenants: 0, keys: 0 });

      const made = await cli(["keys", "create", "--tenant", tenant, "--usd", "1000000"], env);
      expect(made.code).toBe(0);
      expect(made.out).toContain("1,000,000,000,000 credits (1000000.000000 USD)");
      for (const command of [
        ["credits", "add", "--tenant", tenant, "--usd", "1000000.000001"],
        ["credits", "grant", "--tenant", tenant, "--usd", "1000000000000000000000000000000", "--name", "huge"],
        ["credits", "grant", "--tenant", tenant, "--usd", "2000000", "--name", "huge"],
      ]) {
        const answer = await cli(command, env);
        expect({ command, code: answer.code }).toEqual({ command, code: 2 });
      }
      const balance = JSON.parse((await cli(["balance", "--tenant", tenant, "--json"], env)).out);
      expect(balance).toMatchObject({ paid_credits: 1_000_000_000_000, promotional_credits: 0 });
    });

    test("a credit the database refuses fails the command (exit 1) and leaves neither the key nor the tenant", async () => {
      await database.sql.transaction(async (tx) => {
        for (const statement of REFUSE_CREDITS[name]) await tx.query(statement);
      });
      const tenant = `refused-${crypto.randomUUID()}`;
      const failed = await cli(["keys", "create", "--tenant", tenant, "--usd", "5"], env);
      expect(failed).toMatchObject({ code: 1, out: "" });
      expect(failed.err).toContain("credits refused by the test");
      expect(await left(tenant)).toEqual({ tenants: 0, keys: 0 });
      // Without --usd nothing is credited: the key is made.
      expect((await cli(["keys", "create", "--tenant", tenant], env)).code).toBe(0);
      expect(await left(tenant)).toEqual({ tenants: 1, keys: 1 });
    });
  });
}

fundedKeySuite("sqlite", false);
fundedKeySuite("postgres", !postgresAvailable);
