import { afterAll, describe, expect, test } from "bun:test";
import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { PICO_VOICES } from "../src/providers/local-pico/voices.ts";
import { PICO_DIR, startTestServer, testConfig, type TestServer } from "./helpers/server.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// What a server says about itself when it starts: it refuses a port another process holds, and
// offers only the Pico voices it can load.

const ROOT = new URL("..", import.meta.url).pathname;

interface Started {
  proc: ReturnType<typeof Bun.spawn>;
  /** Resolves to the log line that says the server listens; rejects with the exit code and stderr if it exits first. */
  listening: Promise<Record<string, unknown>>;
  stderr: Promise<string>;
}

/** `bun src/main.ts`, as an operator starts it; a setting given as undefined is left unset. */
function startMain(env: Record<string, string | undefined>): Started {
  const settings = {
    ...process.env,
    HOST: "127.0.0.1",
    LOG_LEVEL: "info",
    TTS_WORKERS: "1",
    AUDIO_WORKERS: "1",
    PICO_VOICES_DIR: PICO_DIR,
    PICO_VOICES_URL: "",
    DATABASE_URL: testConfig().databaseUrl,
    ...env,
  };
  const proc = Bun.spawn(["bun", "src/main.ts"], {
    cwd: ROOT,
    env: Object.fromEntries(Object.entries(settings).filter((e): e is [string, string] => e[1] !== undefined)),
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = new Response(proc.stderr).text();
  const listening = (async () => {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of proc.stdout) {
      text += decoder.decode(chunk);
      const line = text.split("\n").find((l) => l.includes('"msg":"voxroute listening"') && l.endsWith("}"));
      if (line) return JSON.parse(line);
    }
    throw new Error(`exited ${await proc.exited}: ${await stderr}`);
  })();
  listening.catch(() => {});
  return { proc, listening, stderr };
}

const running: Started[] = [];
afterAll(async () => {
  for (const s of running) s.proc.kill("SIGTERM");
  await Promise.all(running.map((s) => s.proc.exited));
});

const freePort = () => {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
};
const healthy = (port: number) =>
  fetch(`http://127.0.0.1:${port}/healthz`).then(
    (r) => r.status,
    () => "refused",
  );

describe("a port another process listens on", () => {
  test("a second server refuses to start, says why and exits non-zero; the first keeps serving", async () => {
    const port = freePort();
    const first = startMain({ PORT: String(port) });
    running.push(first);
    await first.listening;
    const second = startMain({ PORT: String(port) });
    running.push(second);
    expect(await second.proc.exited).toBe(1);
    const said = await second.stderr;
    expect(said).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(said).toContain("REUSE_PORT=true");
    for (let i = 0; i < 5; i++) expect(await healthy(port)).toBe(200);
  }, 30_000);

  test("with REUSE_PORT=true both start and share it", async () => {
    const port = freePort();
    const a = startMain({ PORT: String(port), REUSE_PORT: "true" });
    running.push(a);
    await a.listening;
    const b = startMain({ PORT: String(port), REUSE_PORT: "true" });
    running.push(b);
    await b.listening;
    expect(a.proc.exitCode).toBeNull();
    expect(b.proc.exitCode).toBeNull();
    expect(await healthy(port)).toBe(200);
  }, 30_000);
});

describe("the start-up log says where the server listens, as bound", () => {
  test("HOST=0.0.0.0: every interface, said as 0.0.0.0 with the port", async () => {
    const port = freePort();
    const server = startMain({ HOST: "0.0.0.0", PORT: String(port) });
    running.push(server);
    const line = await server.listening;
    expect(line).toMatchObject({ host: "0.0.0.0", port });
    expect(JSON.stringify(line)).not.toContain("127.0.0.1");
    expect(await healthy(port)).toBe(200);
  }, 30_000);

  test("HOST=127.0.0.1 with PORT=0: the loopback address and the port picked", async () => {
    const server = startMain({ HOST: "127.0.0.1", PORT: "0" });
    running.push(server);
    const line = await server.listening;
    expect(line.host).toBe("127.0.0.1");
    expect(line.port).toBeGreaterThan(0);
    expect(await healthy(line.port as number)).toBe(200);
  }, 30_000);
});

describe("it keeps the memory it touched (docs/operations.md#memory)", () => {
  /** The allocator setting the server process runs with, read from the kernel. */
  const purgeDelayOf = (pid: number) =>
    readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .find((e) => e.startsWith("MIMALLOC_PURGE_DELAY="));

  test("unset: the process started replaces itself (the same PID) with MIMALLOC_PURGE_DELAY=-1, and serves", async () => {
    const server = startMain({ PORT: "0", MIMALLOC_PURGE_DELAY: undefined });
    running.push(server);
    const line = await server.listening;
    expect(purgeDelayOf(server.proc.pid)).toBe("MIMALLOC_PURGE_DELAY=-1");
    expect(await healthy(line.port as number)).toBe(200);
  }, 30_000);

  test("an operator's value is kept as it is", async () => {
    const server = startMain({ PORT: "0", MIMALLOC_PURGE_DELAY: "10" });
    running.push(server);
    await server.listening;
    expect(purgeDelayOf(server.proc.pid)).toBe("MIMALLOC_PURGE_DELAY=10");
  }, 30_000);
});

test("a bad setting is said the same way: one line on stderr, exit status 1", async () => {
  const bad = startMain({ PORT: "eighty" });
  expect(await bad.proc.exited).toBe(1);
  expect((await bad.stderr).trim()).toBe('voxroute did not start: config: PORT must be an integer >= 0, got "eighty"');
}, 20_000);

describe("SVOX Pico offers only the voices it can load", () => {
  /** A server started with these Pico settings, its warnings captured. */
  async function withPico(dir: string, url: string, check: (server: TestServer, warnings: Record<string, any>[]) => Promise<void>) {
    const warnings: Record<string, any>[] = [];
    const log = pino({ level: "warn" }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const server = await startTestServer({ PICO_VOICES_DIR: dir, PICO_VOICES_URL: url }, { log });
    try {
      await check(server, warnings);
    } finally {
      await server.stop(0);
    }
  }
  const closedPort = () => `http://127.0.0.1:${freePort()}/lang`;
  const providers = async (server: TestServer) => ((await (await fetch(`${server.url}/v1/providers`)).json()) as { providers: Record<string, any> }).providers;
  /** Pico's voices as SDK users list them. */
  const picoVoices = async (server: TestServer) => {
    const { voices } = (await (await fetch(`${server.url}/el/v1/voices`, { headers: { "xi-api-key": server.key } })).json()) as { voices: { voice_id: string; labels: { provider: string } }[] };
    return voices.filter((v) => v.labels.provider === "svox-pico").map((v) => v.voice_id);
  };
  const refusals = (warnings: Record<string, any>[]) => warnings.filter((w) => w.msg === "SVOX Pico voice not offered");

  test("no files and no reachable URL: Pico is not offered, and the log says why once per voice", async () => {
    const empty = tempDir("pico-empty-");
    await withPico(empty, closedPort(), async (server, warnings) => {
      expect(Object.keys(await providers(server))).not.toContain("svox-pico");
      expect(await picoVoices(server)).toEqual([]);
      // Asking for it anyway is the caller's mistake, not a failed upstream.
      const speak = await fetch(`${server.url}/oai/audio/speech`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}` },
        body: JSON.stringify({ model: "svox/pico", voice: "en-US", input: "Hallo." }),
      });
      expect(speak.status).toBe(400);
      // Said at start-up, once per voice; nothing more when requests come.
      expect(
        refusals(warnings)
          .map((w) => w.voice)
          .sort(),
      ).toEqual(PICO_VOICES.map((v) => v.id).sort());
      for (const w of refusals(warnings)) expect(w.reason).toMatch(/not in .*, and not fetchable: /);
      expect(warnings.filter((w) => w.msg.startsWith("SVOX Pico not offered")).length).toBe(1);
    });
  }, 20_000);

  test("only German present, nothing fetchable: only German is offered, and it is the default voice", async () => {
    const dir = tempDir("pico-de-");
    for (const f of PICO_VOICES.find((v) => v.id === "de-DE")!.files) copyFileSync(join(PICO_DIR, f.name), join(dir, f.name));
    await withPico(dir, "", async (server, warnings) => {
      expect((await providers(server))["svox-pico"].defaults).toEqual({ tts: { model: "pico", voice: "de-DE" } });
      expect(await picoVoices(server)).toEqual(["de-DE"]);
      expect(
        refusals(warnings)
          .map((w) => w.voice)
          .sort(),
      ).toEqual(["en-GB", "en-US", "es-ES", "fr-FR", "it-IT"]);
      expect(warnings.find((w) => w.voice === "en-US")!.reason).toContain("PICO_VOICES_URL is empty");
      const german = await fetch(`${server.url}/oai/audio/speech`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}` },
        body: JSON.stringify({ model: "svox/pico", voice: "de-DE", input: "Guten Tag.", response_format: "pcm" }),
      });
      expect(german.status).toBe(200);
      expect((await german.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
    });
  }, 20_000);

  test("files absent but fetchable: every voice is offered, nothing is downloaded until used", async () => {
    const heads: string[] = [];
    const origin = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        heads.push(req.method);
        return new Response(req.method === "HEAD" ? null : "voice bytes");
      },
    });
    const empty = tempDir("pico-fetchable-");
    try {
      await withPico(empty, `http://127.0.0.1:${origin.port}/lang`, async (server, warnings) => {
        expect(Object.keys(await providers(server))).toContain("svox-pico");
        expect((await picoVoices(server)).length).toBe(PICO_VOICES.length);
        expect(warnings.filter((w) => /Pico/.test(w.msg))).toEqual([]);
        expect(heads.length).toBe(PICO_VOICES.length * 2);
        expect(heads.every((m) => m === "HEAD")).toBe(true);
        expect(readdirSync(empty)).toEqual([]);
      });
    } finally {
      origin.stop(true);
    }
  }, 20_000);

  test("a URL that never answers holds start-up for at most the probe timeout", async () => {
    let asked = 0;
    const silent = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => {
        asked++;
        return new Promise<Response>(() => {});
      },
    });
    const empty = tempDir("pico-silent-");
    try {
      await withPico(empty, `http://127.0.0.1:${silent.port}/lang`, async (server, warnings) => {
        // Every file was asked for and none answered, yet the server started: each probe was given up at its timeout.
        expect(asked).toBe(PICO_VOICES.length * 2);
        expect(Object.keys(await providers(server))).not.toContain("svox-pico");
        for (const w of refusals(warnings)) expect(w.reason).toMatch(/not fetchable: .*The operation timed out/);
        expect(refusals(warnings).length).toBe(PICO_VOICES.length);
      });
    } finally {
      silent.stop(true);
    }
  }, 20_000);
});
