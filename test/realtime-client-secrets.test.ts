import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import { fundedAccount } from "./helpers/accounts.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// POST /v1/realtime/client-secrets over HTTP, and the redeem the /v1/realtime socket will call, on
// SQLite and on PostgreSQL: single use under concurrent redeems, expiry, tenant and profile bounds.

const PIPELINE = { stt: { model: "pocketsphinx" }, tts: { model: "flite", voice: "slt" }, upstream: { url: "wss://app.example/voice" } };
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

function secretTests(name: string, databaseUrl: () => Promise<string | undefined>, { postgres = false, skip = false } = {}) {
  describe.skipIf(skip)(`client secrets on ${name}`, () => {
    let server: TestServer;
    let url: string | undefined;
    beforeAll(async () => {
      url = await databaseUrl();
      server = await startTestServer(url ? { DATABASE_URL: url } : {});
      cleanups.push(() => server.stop(0));
    });

    const post = (path: string, body: unknown, key = server.key) =>
      fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: typeof body === "string" ? body : JSON.stringify(body) });
    const profile = async (key = server.key) => ((await (await post("/v1/realtime/profiles", { name: "line", pipeline: PIPELINE }, key)).json()) as { id: string }).id;
    const mint = async (body: unknown, key = server.key) => {
      const res = await post("/v1/realtime/client-secrets", body, key);
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    const rows = () => server.ctx.database.db.select().from(server.ctx.database.schema.realtimeClientSecrets);
    const redeemed = (secret: string) =>
      server.ctx.clientSecrets.redeem(secret).then(
        (r) => r,
        (e: { code: string }) => e.code,
      );

    test("minted for the tenant's profile, stored hashed, opens that profile once", async () => {
      const profileId = await profile();
      const before = Date.now();
      const { status, body } = await mint({ profile_id: profileId });
      const after = Date.now();
      expect(status).toBe(201);
      expect(Object.keys(body).sort()).toEqual(["client_secret", "expires_at", "profile_id"]);
      expect(body.profile_id).toBe(profileId);
      expect(body.client_secret).toMatch(/^vxr_cs_[A-Za-z0-9_-]{43}$/);
      expect(body.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
      const expires = Date.parse(body.expires_at);
      expect(expires).toBeGreaterThanOrEqual(before + 60_000);
      expect(expires).toBeLessThanOrEqual(after + 60_000);

      const stored = (await rows()).filter((r) => r.profileId === profileId);
      expect(stored).toHaveLength(1);
      expect(stored[0].hash).toBe(sha256(body.client_secret));
      expect(JSON.stringify(stored)).not.toContain(body.client_secret.slice(7));

      expect(await redeemed(body.client_secret)).toEqual({ tenantId: server.tenantId, keyId: expect.any(String), profileId });
      expect(await redeemed(body.client_secret)).toBe("invalid_client_secret");
      expect(await redeemed("vxr_cs_unknown")).toBe("invalid_client_secret");
      expect(await redeemed("")).toBe("invalid_client_secret");
    });

    test("expires_in bounds: 10 and 600 are taken, anything else is 400 with the param", async () => {
      const profileId = await profile();
      for (const seconds of [10, 600]) {
        const before = Date.now();
        const { status, body } = await mint({ profile_id: profileId, expires_in: seconds });
        const after = Date.now();
        expect(status).toBe(201);
        // `seconds` from the moment it was minted, which lies between the two readings of the clock.
        expect(Date.parse(body.expires_at)).toBeGreaterThanOrEqual(before + seconds * 1000);
        expect(Date.parse(body.expires_at)).toBeLessThanOrEqual(after + seconds * 1000);
      }
      for (const expires_in of [9, 601, 0, -1, 30.5, "60", null, true]) {
        expect(await mint({ profile_id: profileId, expires_in })).toMatchObject({ status: 400, body: { error: "invalid_request", param: "expires_in" } });
      }
      for (const profile_id of [undefined, "", 7, null]) {
        expect(await mint({ profile_id })).toMatchObject({ status: 400, body: { error: "invalid_request", param: "profile_id" } });
      }
      expect(await mint("[]")).toMatchObject({ status: 400, body: { error: "invalid_request" } });
      expect(await mint("{not json")).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    });

    test("an unknown or another tenant's profile is 404; no key is 401", async () => {
      expect(await mint({ profile_id: "rp_nope" })).toMatchObject({ status: 404, body: { error: "not_found" } });
      const { key: otherKey, tenantId: other } = await fundedAccount(server);
      const theirs = await profile(otherKey);
      expect(await mint({ profile_id: theirs })).toMatchObject({ status: 404, body: { error: "not_found" } });
      const noKey = await fetch(`${server.url}/v1/realtime/client-secrets`, { method: "POST", body: JSON.stringify({ profile_id: theirs }) });
      expect(noKey.status).toBe(401);
      expect(await mint({ profile_id: theirs }, "vxr_wrong")).toMatchObject({ status: 401, body: { error: "invalid_api_key" } });
      // Minted by its owner, the secret opens that tenant's profile and says so.
      const { body } = await mint({ profile_id: theirs }, otherKey);
      expect(await redeemed(body.client_secret)).toMatchObject({ profileId: theirs, tenantId: other });
    });

    test("an expired secret is refused like an unknown one, and expired rows are swept by later mints", async () => {
      const profileId = await profile();
      const { body } = await mint({ profile_id: profileId, expires_in: 10 });
      const { schema } = server.ctx.database;
      const t = schema.realtimeClientSecrets;
      await server.ctx.database.transaction((tx) =>
        tx
          .update(t)
          .set({ expiresAt: new Date(Date.now() - 1000) })
          .where(eq(t.hash, sha256(body.client_secret))),
      );
      expect(await redeemed(body.client_secret)).toBe("invalid_client_secret");
      const { body: used } = await mint({ profile_id: profileId });
      expect(await redeemed(used.client_secret)).toMatchObject({ profileId });
      await mint({ profile_id: profileId });
      const hashes = (await rows()).map((r) => r.hash);
      expect(hashes).not.toContain(sha256(body.client_secret));
      expect(hashes).toContain(sha256(used.client_secret)); // used but not expired: kept until it expires
      expect((await rows()).every((r) => r.expiresAt.getTime() > Date.now() - 1000)).toBe(true);
    });

    test("a secret of a revoked key or a disabled tenant opens nothing", async () => {
      const { key, tenantId } = await fundedAccount(server);
      const profileId = await profile(key);
      const secrets = await Promise.all([1, 2, 3].map(async () => (await mint({ profile_id: profileId }, key)).body.client_secret));
      const { schema } = server.ctx.database;
      await server.ctx.database.transaction((tx) => tx.update(schema.tenants).set({ disabled: true }).where(eq(schema.tenants.id, tenantId)));
      expect(await redeemed(secrets[0])).toBe("invalid_client_secret");
      await server.ctx.database.transaction((tx) => tx.update(schema.tenants).set({ disabled: false }).where(eq(schema.tenants.id, tenantId)));
      expect(await redeemed(secrets[1])).toMatchObject({ tenantId, profileId });
      await server.ctx.database.transaction((tx) => tx.update(schema.apiKeys).set({ revokedAt: new Date() }).where(eq(schema.apiKeys.tenantId, tenantId)));
      expect(await redeemed(secrets[2])).toBe("invalid_client_secret");
    });

    test("concurrent redeems of one secret: exactly one wins", async () => {
      const profileId = await profile();
      const secrets = await Promise.all(Array.from({ length: 20 }, async () => (await mint({ profile_id: profileId })).body.client_secret));
      const outcomes = await Promise.all(secrets.flatMap((s) => Array.from({ length: 4 }, () => redeemed(s))));
      for (let i = 0; i < secrets.length; i++) {
        const mine = outcomes.slice(i * 4, i * 4 + 4);
        expect(mine.filter((o) => typeof o === "object")).toHaveLength(1);
        expect(mine.filter((o) => o === "invalid_client_secret")).toHaveLength(3);
      }
    });

    if (postgres)
      test("concurrent redeems from two server instances on one PostgreSQL: exactly one wins", async () => {
        const second = await startTestServer({ DATABASE_URL: url! });
        cleanups.push(() => second.stop(0));
        const profileId = await profile();
        const secrets = await Promise.all(Array.from({ length: 20 }, async () => (await mint({ profile_id: profileId })).body.client_secret));
        const from = (s: TestServer, secret: string) =>
          s.ctx.clientSecrets.redeem(secret).then(
            () => 1,
            () => 0,
          );
        const wins = await Promise.all(secrets.map(async (s) => (await Promise.all([from(server, s), from(second, s), from(server, s), from(second, s)])).reduce((a, b) => a + b, 0)));
        expect(wins).toEqual(secrets.map(() => 1));
      });
  });
}

secretTests("SQLite", async () => undefined);
secretTests(
  "PostgreSQL",
  async () => {
    const fresh = await freshPostgres();
    cleanups.push(fresh.drop);
    return fresh.url;
  },
  { postgres: true, skip: !postgresAvailable },
);
