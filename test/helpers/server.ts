import { join } from "node:path";
import { createKey } from "./accounts.ts";
import { loadConfig, type Config } from "../../src/config.ts";
import { startServer, type RunningServer, type ServerOptions } from "../../src/server.ts";
import { PICO_DIR } from "./pico.ts";
import { tempDir } from "./temp-dirs.ts";

export { PICO_DIR };

/** A config for tests: a fresh SQLite file, an ephemeral port, quiet logs, all local engines, loopback applications allowed. */
export function testConfig(env: Record<string, string> = {}): Config {
  const dir = tempDir("voxroute-test-");
  return loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: `sqlite://${join(dir, "db.sqlite")}`,
    LOG_LEVEL: "silent",
    PICO_VOICES_DIR: PICO_DIR,
    PICO_VOICES_URL: "",
    ESPEAK_ENABLED: "true",
    TTS_WORKERS: "1",
    // Fake applications listen on loopback; the guard's own tests start servers with "false".
    REALTIME_ALLOW_PRIVATE_UPSTREAMS: "true",
    // Circuits never open: fault tests meet one provider with fault after fault on one server. The
    // provider-health tests set their own threshold.
    PROVIDER_FAILURE_THRESHOLD: "0",
    // No TTS cache: tests count what providers are given and bill, with texts that repeat sentences.
    // The cache's own tests (tts-cache.test.ts) turn it on.
    TTS_CACHE_BYTES: "0",
    ...env,
  });
}

export interface TestServer extends RunningServer {
  key: string;
  tenantId: string;
  wsUrl: (path: string) => string;
}

export async function startTestServer(env: Record<string, string> = {}, options: ServerOptions = {}): Promise<TestServer> {
  const server = await startServer(testConfig(env), options);
  const { key, tenantId } = await createKey(server.ctx.database, "test-tenant");
  // $100 of paid credits: tests that are not about money should never run out.
  await server.ctx.meter.ledger.credit(tenantId, { credits: 100_000_000, type: "adjustment", description: "test funds" });
  return { ...server, key, tenantId, wsUrl: (path) => server.url.replace(/^http/, "ws") + path };
}

/** Why a server with `env` does not start (its error's message), or "started" (then stopped). */
export function startRefusal(env: Record<string, string>): Promise<string> {
  return startServer(testConfig(env)).then(
    async (s) => {
      await s.stop(0);
      return "started";
    },
    (e: Error) => e.message,
  );
}

/** Stops the server, then the fakes it was pointed at: a test file's afterAll. */
export async function stopServerAndFakes(server: TestServer, ...fakes: { stop(): unknown }[]) {
  await server.stop(0);
  for (const fake of fakes) fake.stop();
}
