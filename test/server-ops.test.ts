import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../src/config.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { testConfig, startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({}, { extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider()] } });
});
afterAll(() => server.stop(0));

describe("operator endpoints", () => {
  test("GET /healthz", async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok" });
  });

  test("GET /metrics counts sessions by surface, provider and status, and time to first audio", async () => {
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(server.key));
    await c.opened;
    await Bun.sleep(50);
    const during = await (await fetch(`${server.url}/metrics`)).text();
    expect(during).toContain('voxroute_sessions_open{channel="tts"} 1');
    c.send({ type: "text", text: "hi" });
    c.send({ type: "close" });
    await c.closed;
    await Bun.sleep(20);
    const res = await fetch(`${server.url}/metrics`);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    expect(text).toContain('voxroute_sessions_open{channel="tts"} 0');
    expect(text).toMatch(/voxroute_requests_total\{surface="native",provider="fixed",status="completed"\} [1-9]/);
    expect(text).toMatch(/voxroute_time_to_first_audio_seconds_count\{provider="fixed"\} [1-9]/);
  });

  test("OpenAPI is served", async () => {
    const res = await fetch(`${server.url}/swagger/json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain("/v1/providers");
  });

  test("catalogue endpoints need no key", async () => {
    const providers = (await (await fetch(`${server.url}/v1/providers`)).json()) as { providers: Record<string, unknown> };
    expect(Object.keys(providers.providers)).toEqual(["flite", "svox-pico", "espeak-ng", ...(localSttAvailable ? ["pocketsphinx"] : []), "fixed", "unpriced"]);
    const models = (await (await fetch(`${server.url}/v1/models`)).json()) as { tts: { canonical: string }[]; stt: { canonical: string }[] };
    expect(models.tts.map((m) => m.canonical)).toContain("svox/pico");
    expect(models.stt.map((m: any) => m.canonical)).toEqual(localSttAvailable ? ["cmu/pocketsphinx-en-us"] : []);
  });

  test("unknown paths answer 404 in the flat envelope", async () => {
    const res = await fetch(`${server.url}/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: "not_found" });
  });
});

describe("configuration", () => {
  test("defaults: port 8080, SQLite under ./data, info logs", () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ port: 8080, databaseUrl: "sqlite://./data/voxroute.sqlite", logLevel: "info" });
    expect(c.providers["espeak-ng"]).toEqual({ enabled: false });
    expect(c.providers.openai).toEqual({ apiKey: undefined, baseUrl: undefined });
  });

  test("provider credentials and base URLs come from their usual variable names", () => {
    const c = loadConfig({ ELEVENLABS_API_KEY: "el", OPENAI_BASE_URL: "http://127.0.0.1:1/v1/", ASSEMBLYAI_API_KEY: "aai" });
    expect(c.providers.elevenlabs.apiKey).toBe("el");
    expect(c.providers.openai.baseUrl).toBe("http://127.0.0.1:1/v1");
    expect(c.providers.assemblyai.apiKey).toBe("aai");
  });

  test("bad values are refused at start with the variable's name", () => {
    expect(() => loadConfig({ PORT: "eighty" })).toThrow(/PORT/);
    expect(() => loadConfig({ LOG_LEVEL: "loud" })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ TTS_WORKERS: "0" })).toThrow(/TTS_WORKERS/);
  });
});

describe("graceful shutdown on SIGTERM", () => {
  test("during the grace period /healthz is 503 shutting_down and new work 503; a session finishes, the rest close 1001", async () => {
    const config = testConfig();
    const port = 20000 + Math.floor(Math.random() * 20000);
    const root = new URL("..", import.meta.url).pathname;
    const env = {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: config.databaseUrl,
      LOG_LEVEL: "info",
      SHUTDOWN_GRACE_MS: "1500",
      PICO_VOICES_DIR: config.providers["svox-pico"].voicesDir,
    };
    const key = Bun.spawnSync(["bun", "src/cli.ts", "keys", "create", "--tenant", "t"], { cwd: root, env }).stdout.toString().trim().split("\n").at(-1)!;
    expect(Bun.spawnSync(["bun", "src/cli.ts", "credits", "add", "--tenant", "t", "--usd", "5"], { cwd: root, env }).exitCode).toBe(0);
    const proc = Bun.spawn(["bun", "src/main.ts"], { cwd: root, env, stdout: "pipe", stderr: "pipe" });
    const base = `127.0.0.1:${port}`;
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`http://${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await Bun.sleep(100);
    }
    // One session will finish during the grace period, one never sends close.
    const finishing = connect(`ws://${base}/v1/tts?model=flite&voice=slt`, bearer(key));
    const idle = connect(`ws://${base}/v1/tts?model=flite&voice=slt`, bearer(key));
    await Promise.all([finishing.opened, idle.opened]);
    await Bun.sleep(200);

    const t0 = performance.now();
    proc.kill("SIGTERM");
    await Bun.sleep(300);
    // Still listening: balancers read 503 on /healthz, and new work is refused in each surface's envelope.
    const health = await fetch(`http://${base}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: "shutting_down", sessions: 2 });
    const refused = async (path: string, init: RequestInit = {}) => {
      const res = await fetch(`http://${base}${path}`, init);
      return { status: res.status, body: await res.json() };
    };
    expect(await refused("/v1/tts?model=flite&voice=slt", { headers: bearer(key) })).toMatchObject({ status: 503, body: { error: "service_unavailable" } });
    expect(await refused("/oai/audio/speech", { method: "POST", headers: bearer(key), body: "{}" })).toMatchObject({ status: 503, body: { error: { code: "service_unavailable" } } });
    expect(await refused("/el/v1/models", { headers: { "xi-api-key": key } })).toMatchObject({ status: 503, body: { detail: { status: "service_unavailable" } } });
    const late = connect(`ws://${base}/v1/tts?model=flite&voice=slt`, bearer(key));
    expect(
      await late.opened.then(
        () => "opened",
        () => "refused",
      ),
    ).toBe("refused");
    expect((await fetch(`http://${base}/metrics`)).status).toBe(200);
    finishing.send({ type: "text", text: "Finishing during the grace period." });
    finishing.send({ type: "close" });

    const done = await finishing.closed;
    expect(done.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(done.audio.length).toBeGreaterThan(0);
    const cut = await idle.closed;
    expect(cut.close.code).toBe(1001);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1400);
    expect(await proc.exited).toBe(0);
    const logs = await new Response(proc.stdout).text();
    expect(logs).toContain("shutting down");
    expect(logs).toContain('"msg":"shut down"');
  });
});
