import { afterAll, describe, expect, test } from "bun:test";
import { PICO_DIR, testConfig } from "./helpers/server.ts";

// What a server says about itself when it starts: it refuses a port another process holds.

const ROOT = new URL("..", import.meta.url).pathname;

interface Started {
  proc: ReturnType<typeof Bun.spawn>;
  /** Resolves once the server logged that it listens; rejects with the exit code and stderr if it exits first. */
  listening: Promise<void>;
  stderr: Promise<string>;
}

/** `bun src/main.ts`, as an operator starts it. */
function startMain(env: Record<string, string>): Started {
  const proc = Bun.spawn(["bun", "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, HOST: "127.0.0.1", LOG_LEVEL: "info", TTS_WORKERS: "1", AUDIO_WORKERS: "1", PICO_VOICES_DIR: PICO_DIR, PICO_VOICES_URL: "", DATABASE_URL: testConfig().databaseUrl, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = new Response(proc.stderr).text();
  const listening = (async () => {
    const decoder = new TextDecoder();
    let text = "";
    for await (const chunk of proc.stdout) {
      text += decoder.decode(chunk);
      if (text.includes('"msg":"voxroute listening"')) return;
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
const healthy = (port: number) => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => "refused");

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
