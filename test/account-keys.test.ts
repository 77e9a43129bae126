import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { createKey } from "./helpers/accounts.ts";
import { mintKey } from "../src/accounts/keys.ts";
import { LIVE_KEYS_PER_TENANT } from "../src/accounts/own-keys.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// `/account/keys` over HTTP, on SQLite and on PostgreSQL: listing by prefix with when each key was
// last used, creation (the key shown once, and working), revocation by prefix or id.

function suite(name: string, databaseUrl: () => Promise<{ url?: string; drop?: () => Promise<void> }>, skip: boolean) {
  describe.skipIf(skip)(`/account/keys on ${name}`, () => {
    let server: TestServer;
    let drop: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      const db = await databaseUrl();
      drop = db.drop;
      server = await startTestServer(db.url ? { DATABASE_URL: db.url } : {}, { extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed", 1)] } });
    });
    afterAll(async () => {
      await server.stop(0);
      await drop?.();
    });

    const call = async (method: string, path: string, key: string, body?: string) => {
      const res = await fetch(`${server.url}${path}`, { method, headers: { ...bearer(key), "content-type": "application/json" }, body });
      return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as any) };
    };
    const account = async () => {
      const { key, tenantId } = await createKey(server.ctx.database, `keys-${crypto.randomUUID()}`);
      await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
      return { key, tenantId };
    };
    const speak = async (key: string) => {
      const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(key));
      c.send({ type: "text", text: "hello" });
      c.send({ type: "close" });
      await c.closed;
    };

    test("a created key is shown once, works, and is listed by its prefix with when it was created and last used", async () => {
      const { key } = await account();
      const created = await call("POST", "/account/keys", key);
      expect(created.status).toBe(201);
      expect(created.body.api_key).toStartWith("vxr_");
      expect(created.body.key_prefix).toBe(created.body.api_key.slice(0, 12));
      expect(typeof created.body.id).toBe("string");

      const spokenFrom = Date.now();
      await speak(created.body.api_key);
      const listed = await call("GET", "/account/keys", created.body.api_key);
      expect(listed.status).toBe(200);
      expect(listed.body.items.length).toBe(2);
      // Newest first; no key in clear, only prefixes.
      const [fresh, first] = listed.body.items;
      expect(fresh).toEqual({ id: created.body.id, prefix: created.body.key_prefix, created_at: expect.any(String), revoked_at: null, last_used_at: expect.any(String) });
      // The start of the request just made: not before it (to the whole second a database may keep), not after this listing.
      expect(Date.parse(fresh.last_used_at)).toBeGreaterThanOrEqual(Math.floor(spokenFrom / 1000) * 1000);
      expect(Date.parse(fresh.last_used_at)).toBeLessThanOrEqual(Date.now());
      expect(first.prefix).toBe(key.slice(0, 12));
      expect(first.last_used_at).toBeNull();
      expect(JSON.stringify(listed.body)).not.toContain(created.body.api_key);
      expect(JSON.stringify(listed.body)).not.toContain(key);
    });

    test("an empty JSON object is taken as no body; a body with anything but the key's limits is 400", async () => {
      const { key } = await account();
      expect((await call("POST", "/account/keys", key, "{}")).status).toBe(201);
      const refused = await call("POST", "/account/keys", key, '{"name":"ci"}');
      expect(refused).toMatchObject({ status: 400, body: { error: "invalid_request", param: "name", message: expect.stringContaining("not a key's setting") } });
      expect((await call("GET", "/account/keys?limit=3", key)).body).toMatchObject({ error: "invalid_request", param: "limit" });
    });

    test("revoked by prefix: the key no longer authenticates, and open sessions with it end", async () => {
      const { key } = await account();
      const other = (await call("POST", "/account/keys", key)).body;
      const session = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(other.api_key));
      await session.opened;
      expect((await call("DELETE", `/account/keys/${other.key_prefix}`, key)).status).toBe(204);
      expect((await call("GET", "/account/balance", other.api_key)).body.error).toBe("invalid_api_key");
      expect((await session.closed).close).toEqual({ code: 4401, reason: JSON.stringify({ error: "invalid_api_key" }) });
      const listed = (await call("GET", "/account/keys", key)).body.items;
      expect(listed.find((k: any) => k.id === other.id).revoked_at).toEqual(expect.any(String));
      // Revoked once: a second revoke finds no live key.
      expect(await call("DELETE", `/account/keys/${other.id}`, key)).toMatchObject({ status: 404, body: { error: "not_found", param: "key" } });
    });

    test("revoked by id; a key may revoke itself; another account's key is as absent as an unknown one", async () => {
      const { key } = await account();
      const stranger = await account();
      const [mine] = (await call("GET", "/account/keys", key)).body.items;
      expect((await call("DELETE", `/account/keys/${mine.id}`, stranger.key)).status).toBe(404);
      expect((await call("DELETE", `/account/keys/${stranger.key.slice(0, 12)}`, key)).status).toBe(404);
      expect((await call("DELETE", "/account/keys/vxr_nothing", key)).status).toBe(404);
      expect((await call("GET", "/account/balance", stranger.key)).status).toBe(200);
      expect((await call("DELETE", `/account/keys/${mine.id}`, key)).status).toBe(204);
      expect((await call("GET", "/account/keys", key)).body.error).toBe("invalid_api_key");
    });

    test("a prefix that names several live keys is refused: the id tells them apart", async () => {
      const { key, tenantId } = await account();
      const twin = await mintKey(server.ctx.database, tenantId);
      const k = server.ctx.database.schema.apiKeys;
      await server.ctx.database.transaction((tx) =>
        tx
          .update(k)
          .set({ prefix: key.slice(0, 12) })
          .where(eq(k.id, twin.keyId)),
      );
      expect((await call("DELETE", `/account/keys/${key.slice(0, 12)}`, key)).body).toMatchObject({ error: "invalid_request", param: "key" });
      expect((await call("DELETE", `/account/keys/${twin.keyId}`, key)).status).toBe(204);
    });

    test(`at most ${LIVE_KEYS_PER_TENANT} live keys; revoking one makes room`, async () => {
      const { key, tenantId } = await account();
      for (let i = 1; i < LIVE_KEYS_PER_TENANT; i++) await mintKey(server.ctx.database, tenantId);
      const refused = await call("POST", "/account/keys", key);
      expect(refused).toMatchObject({ status: 400, body: { error: "invalid_request", message: expect.stringContaining(`${LIVE_KEYS_PER_TENANT}`) } });
      const [newest] = (await call("GET", "/account/keys", key)).body.items;
      expect((await call("DELETE", `/account/keys/${newest.id}`, key)).status).toBe(204);
      expect((await call("POST", "/account/keys", key)).status).toBe(201);
    });

    test(`creations at once cannot overrun the limit: with 80 live keys, 50 concurrent POSTs make 20 and refuse 30`, async () => {
      const { key, tenantId } = await account();
      for (let live = 1; live < 80; live++) await mintKey(server.ctx.database, tenantId);
      const answers = await Promise.all(Array.from({ length: 50 }, () => call("POST", "/account/keys", key)));
      const made = answers.filter((a) => a.status === 201);
      const refused = answers.filter((a) => a.status !== 201);
      expect(made).toHaveLength(LIVE_KEYS_PER_TENANT - 80);
      expect(refused).toHaveLength(30);
      for (const answer of refused) expect(answer).toMatchObject({ status: 400, body: { error: "invalid_request", message: expect.stringContaining(`${LIVE_KEYS_PER_TENANT}`) } });
      const listed = (await call("GET", "/account/keys", key)).body.items as { revoked_at: string | null }[];
      expect(listed.filter((k) => k.revoked_at === null)).toHaveLength(LIVE_KEYS_PER_TENANT);
    });

    test("no key or a bad key: 401", async () => {
      expect((await fetch(`${server.url}/account/keys`)).status).toBe(401);
      expect((await call("POST", "/account/keys", "vxr_wrong")).body.error).toBe("invalid_api_key");
    });
  });
}

suite("SQLite", async () => ({}), false);
suite("PostgreSQL", freshPostgres, !postgresAvailable);
