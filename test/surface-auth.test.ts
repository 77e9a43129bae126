import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { fundedAccount } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// Every authenticated HTTP route reads its key where its surface reads keys, and refuses before
// its handler runs, in its surface's envelope: native `{error}`, /el `{detail}` (flat
// `{error: "missing_api_key"}` with no key), /oai the OpenAI error object.

type Surface = "native" | "el" | "oai";
const ROUTES: { surface: Surface; method: string; path: string }[] = [
  { surface: "native", method: "POST", path: "/v1/stt/transcriptions" },
  { surface: "native", method: "GET", path: "/account/balance" },
  { surface: "native", method: "GET", path: "/account/activity" },
  { surface: "native", method: "GET", path: "/account/usage" },
  { surface: "native", method: "GET", path: "/account/transactions" },
  { surface: "native", method: "POST", path: "/account/top-up-link" },
  { surface: "native", method: "POST", path: "/v1/realtime/profiles" },
  { surface: "native", method: "GET", path: "/v1/realtime/profiles/nope" },
  { surface: "el", method: "POST", path: "/el/v1/text-to-speech/v/stream" },
  { surface: "el", method: "POST", path: "/el/v1/text-to-speech/v" },
  { surface: "el", method: "POST", path: "/el/v1/speech-to-text" },
  { surface: "el", method: "GET", path: "/el/v1/models" },
  { surface: "el", method: "GET", path: "/el/v1/voices" },
  { surface: "el", method: "POST", path: "/el/v1/speech-engine" },
  { surface: "el", method: "GET", path: "/el/v1/speech-engine/nope" },
  { surface: "el", method: "GET", path: "/el/v1/history" },
  { surface: "oai", method: "POST", path: "/oai/audio/speech" },
  { surface: "oai", method: "POST", path: "/oai/audio/transcriptions" },
  { surface: "oai", method: "GET", path: "/oai/embeddings" },
];

/** The code an error body carries, read as the surface spells it. */
function codeIn(surface: Surface, body: unknown): unknown {
  const b = body as { error?: unknown; detail?: { status?: string } };
  if (surface === "native") return b.error;
  if (surface === "oai") return (b.error as { code?: string } | undefined)?.code;
  return b.detail?.status ?? b.error;
}

let server: TestServer;
let disabledKey: string;

beforeAll(async () => {
  server = await startTestServer();
  const disabled = await fundedAccount(server);
  disabledKey = disabled.key;
  const { schema } = server.ctx.database;
  await server.ctx.database.transaction((tx) => tx.update(schema.tenants).set({ disabled: true }).where(eq(schema.tenants.id, disabled.tenantId)));
});
afterAll(() => server.stop(0));

const call = (method: string, path: string, headers: Record<string, string>) =>
  fetch(server.url + path, { method, headers: { "content-type": "application/json", ...headers }, body: method === "POST" ? "{not json" : undefined });

describe("authentication, one plugin per surface", () => {
  for (const { surface, method, path } of ROUTES) {
    test(`${method} ${path}: no key 401, unknown key 401, disabled tenant 403, in the ${surface} envelope; a good key passes`, async () => {
      const missing = await call(method, path, {});
      expect(missing.status).toBe(401);
      expect(missing.headers.get("x-should-retry")).toBe("false");
      const missingBody = await missing.json();
      expect(codeIn(surface, missingBody)).toBe("missing_api_key");
      if (surface === "el") expect(missingBody).toEqual({ error: "missing_api_key" });

      const unknown = await call(method, path, { authorization: "Bearer vxr_not-a-key" });
      expect(unknown.status).toBe(401);
      expect(codeIn(surface, await unknown.json())).toBe("invalid_api_key");

      const disabled = await call(method, path, surface === "el" ? { "xi-api-key": disabledKey } : { authorization: `Bearer ${disabledKey}` });
      expect(disabled.status).toBe(403);
      expect(codeIn(surface, await disabled.json())).toBe("tenant_disabled");

      // Where the surface reads the key: /el also takes `xi-api-key`; the Bearer surfaces do not.
      const xi = await call(method, path, { "xi-api-key": server.key });
      if (surface === "el") expect([401, 403]).not.toContain(xi.status);
      else expect(codeIn(surface, await xi.json())).toBe("missing_api_key");
      const bearer = await call(method, path, { authorization: `Bearer ${server.key}` });
      expect([401, 403]).not.toContain(bearer.status);
    });
  }
});
