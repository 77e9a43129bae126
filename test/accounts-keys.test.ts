import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { createKey } from "./helpers/accounts.ts";
import { bearerToken, hashKey } from "../src/accounts/keys.ts";
import { KeyView } from "../src/accounts/key-view.ts";
import { openDatabase, type Database } from "../src/db/open.ts";
import { ApiError } from "../src/errors.ts";

/** A key read afresh, as a request with a key this instance has not served reads it. */
const authenticate = (database: Database, key: string | undefined) => new KeyView(database, 60_000).authenticate(key);
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

const sqliteUrl = () => `sqlite://${join(tempDir("keys-"), "db.sqlite")}`;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${err}`);
  return err.code;
}

function keyTests(name: string, open: () => Promise<Database>, skip = false) {
  describe.skipIf(skip)(`API keys on ${name}`, () => {
    let database: Database;
    test("migrations apply and a key authenticates its tenant", async () => {
      database = await open();
      cleanups.push(() => database.close());
      const { key, tenantId } = await createKey(database, "acme");
      expect(key).toMatch(/^vxr_[A-Za-z0-9_-]{43}$/);
      expect(await authenticate(database, key)).toMatchObject({ tenantId, tenantName: "acme" });
    });

    test("the key is stored only as a hash, with a short prefix for listings", async () => {
      const { key, keyId } = await createKey(database, "acme");
      const [row] = await database.db.select().from(database.schema.apiKeys).where(eq(database.schema.apiKeys.id, keyId));
      expect(row.hash).toBe(hashKey(key));
      expect(row.prefix).toBe(key.slice(0, 12));
      expect(JSON.stringify(row)).not.toContain(key);
    });

    test("a second key for the same tenant name reuses the tenant", async () => {
      const a = await createKey(database, "shared-name");
      const b = await createKey(database, "shared-name");
      expect(a.tenantId).toBe(b.tenantId);
      expect(a.key).not.toBe(b.key);
    });

    test("missing → missing_api_key, unknown → invalid_api_key, disabled → tenant_disabled, revoked → invalid_api_key", async () => {
      expect(await codeOf(authenticate(database, undefined))).toBe("missing_api_key");
      expect(await codeOf(authenticate(database, "vxr_unknown"))).toBe("invalid_api_key");
      const { key, tenantId, keyId } = await createKey(database, "to-disable");
      await database.transaction((tx) => tx.update(database.schema.tenants).set({ disabled: true }).where(eq(database.schema.tenants.id, tenantId)));
      expect(await codeOf(authenticate(database, key))).toBe("tenant_disabled");
      await database.transaction((tx) => tx.update(database.schema.apiKeys).set({ revokedAt: new Date() }).where(eq(database.schema.apiKeys.id, keyId)));
      expect(await codeOf(authenticate(database, key))).toBe("invalid_api_key");
    });

    test("reopening applies no migration twice and keeps the data", async () => {
      const again = await open();
      cleanups.push(() => again.close());
      const rows = await again.db.select().from(again.schema.tenants);
      expect(rows.length).toBeGreaterThan(0);
    });
  });
}

const sqliteFile = sqliteUrl();
keyTests("SQLite", () => openDatabase(sqliteFile));

let pgUrl: string | undefined;
keyTests(
  "PostgreSQL",
  async () => {
    if (!pgUrl) {
      const fresh = await freshPostgres();
      pgUrl = fresh.url;
      cleanups.push(fresh.drop);
    }
    return openDatabase(pgUrl);
  },
  !postgresAvailable,
);

describe("bearer tokens", () => {
  test("only the Bearer scheme with one token is read", () => {
    expect(bearerToken("Bearer abc")).toBe("abc");
    expect(bearerToken("bearer abc ")).toBe("abc");
    expect(bearerToken("Basic abc")).toBeUndefined();
    expect(bearerToken("Bearer a b")).toBeUndefined();
    expect(bearerToken(null)).toBeUndefined();
  });
});

describe("operator CLI", () => {
  const cli = (args: string[], env: Record<string, string>) =>
    Bun.spawnSync(["bun", "src/cli.ts", ...args], { env: { ...process.env, LOG_LEVEL: "silent", ...env }, cwd: new URL("..", import.meta.url).pathname });

  test("keys create prints the new key alone on the last line, and it works", async () => {
    const url = sqliteUrl();
    const out = cli(["keys", "create", "--tenant", "cli-tenant"], { DATABASE_URL: url });
    expect(out.exitCode).toBe(0);
    const lines = out.stdout.toString().trimEnd().split("\n");
    const key = lines.at(-1)!;
    expect(key).toMatch(/^vxr_\S+$/);
    const database = await openDatabase(url);
    cleanups.push(() => database.close());
    expect(await authenticate(database, key)).toMatchObject({ tenantName: "cli-tenant" });
  });

  test("credits, grants, tenants and keys: every operator command does what it says", async () => {
    const url = sqliteUrl();
    const env = { DATABASE_URL: url };
    const ok = (args: string[]) => {
      const out = cli(args, env);
      expect({ args, code: out.exitCode, err: out.stderr.toString() }).toMatchObject({ code: 0 });
      return out.stdout.toString();
    };
    const key = ok(["keys", "create", "--tenant", "ops"]).trimEnd().split("\n").at(-1)!;
    ok(["credits", "add", "--tenant", "ops", "--usd", "2.5"]);
    ok(["credits", "grant", "--tenant", "ops", "--usd", "1", "--name", "launch", "--days", "7", "--target", "flite/*", "--target", "svox-pico/svox/pico"]);
    const database = await openDatabase(url);
    cleanups.push(() => database.close());
    const { Ledger } = await import("../src/ledger/ledger.ts");
    const { tenantId } = await authenticate(database, key);
    const snap = await new Ledger(database).snapshot(tenantId);
    expect(snap.balance.paidCredits).toBe(2_500_000);
    expect(snap.grants).toEqual([
      expect.objectContaining({
        name: "launch",
        remainingCredits: 1_000_000,
        targets: JSON.stringify([
          { provider: "flite", model: "*" },
          { provider: "svox-pico", model: "svox/pico" },
        ]),
      }),
    ]);
    expect(snap.grants[0].expiresAt!.getTime()).toBeGreaterThan(Date.now() + 6 * 86_400_000);

    expect(ok(["keys", "list", "--tenant", "ops"])).toContain(key.slice(0, 12));
    ok(["tenants", "disable", "--tenant", "ops"]);
    expect(await authenticate(database, key).catch((e) => e.code)).toBe("tenant_disabled");
    ok(["tenants", "enable", "--tenant", "ops"]);
    expect((await authenticate(database, key)).tenantId).toBe(tenantId);
    ok(["keys", "revoke", "--tenant", "ops", "--prefix", key.slice(0, 12)]);
    expect(await authenticate(database, key).catch((e) => e.code)).toBe("invalid_api_key");
    expect(ok(["keys", "list", "--tenant", "ops"])).toContain("revoked");

    expect(cli(["credits", "add", "--tenant", "ops", "--usd", "0.0000001"], env).exitCode).toBe(2); // finer than a credit
    expect(cli(["credits", "add", "--tenant", "nobody", "--usd", "1"], env).exitCode).toBe(3); // no such tenant
    expect(cli(["credits", "grant", "--tenant", "ops", "--usd", "1", "--name", "x", "--target", "flite"], env).exitCode).toBe(2);
    expect(cli(["keys", "revoke", "--tenant", "ops", "--prefix", "vxr_nothing"], env).exitCode).toBe(3); // no such key
  });

  test("bad usage exits 2 with the usage line", () => {
    const out = cli(["keys", "create"], { DATABASE_URL: sqliteUrl() });
    expect(out.exitCode).toBe(2);
    expect(out.stderr.toString()).toContain("--tenant is required");
    expect(out.stderr.toString()).toContain("keys create --tenant NAME");
    expect(cli(["nonsense"], { DATABASE_URL: sqliteUrl() }).exitCode).toBe(2);
  });
});

describe("SQLite group commit", () => {
  test("transactions queued together commit together; one that throws is rolled back alone", async () => {
    const database = await openDatabase(sqliteUrl());
    cleanups.push(() => database.close());
    const t = database.schema.tenants;
    const insert = (name: string, fail = false) =>
      database.transaction(async (tx) => {
        await tx.insert(t).values({ id: crypto.randomUUID(), name, createdAt: new Date() });
        if (fail) throw new Error(`${name} fails after writing`);
        return name;
      });
    const outcomes = await Promise.allSettled([insert("a"), insert("b", true), insert("c"), database.sql.transaction((tx) => tx.query("SELECT 1 AS one"))]);
    expect(outcomes.map((o) => o.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    const names = (await database.db.select({ name: t.name }).from(t)).map((r) => r.name).sort();
    expect(names).toEqual(["a", "c"]);
  });
});
