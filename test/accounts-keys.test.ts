import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { authenticate, bearerToken, createKey, hashKey } from "../src/accounts/keys.ts";
import { openDatabase, type Database } from "../src/db/open.ts";
import { ApiError } from "../src/errors.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";

const sqliteUrl = () => `sqlite://${join(mkdtempSync(join(tmpdir(), "keys-")), "db.sqlite")}`;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups) await c();
});

async function codeOf(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => undefined, (e) => e);
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
      await database.db.update(database.schema.tenants).set({ disabled: true }).where(eq(database.schema.tenants.id, tenantId));
      expect(await codeOf(authenticate(database, key))).toBe("tenant_disabled");
      await database.db.update(database.schema.apiKeys).set({ revokedAt: new Date() }).where(eq(database.schema.apiKeys.id, keyId));
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

  test("bad usage exits 2 with the usage line", () => {
    const out = cli(["keys", "create"], { DATABASE_URL: sqliteUrl() });
    expect(out.exitCode).toBe(2);
    expect(out.stderr.toString()).toContain("--tenant is required");
    expect(out.stderr.toString()).toContain("usage: bun run cli <command>");
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
