import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REFERENCE_ASSETS, REFERENCE_PATH } from "../src/openapi/reference-page.ts";
import { startFakeOtlpReceiver } from "./fakes/otlp-receiver.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { localSttAvailable, transcribeRecording } from "./helpers/local-stt.ts";
import { bearer } from "./helpers/ws-client.ts";

// The compiled executable (`bun run build`), copied alone into an empty directory and started
// there with no arguments, as an operator would: the embedded default (SQLite under ./data), the
// operator CLI, Flite and Pico speech, PocketSphinx with the router VAD (and its second chance
// when it could not load), the API documents and their reference page, the dashboard's page, and
// a clean stop that leaves nothing of its own in the temporary directory.

const ROOT = new URL("..", import.meta.url).pathname;
let dir: string;
let proc: ReturnType<typeof Bun.spawn>;
let url: string;

/**
 * Only these variables: Pico's voice files are all it is given, its cache and temporary files stay
 * in `home` (the executable's directory), PORT=0 picks a free port.
 */
const env = (home = dir) => ({ PATH: process.env.PATH!, HOST: "127.0.0.1", PORT: "0", PICO_VOICES_URL: "", XDG_CACHE_HOME: join(home, "cache"), TMPDIR: join(home, "tmp") });

/** Starts the executable in `home` (its log in `home/log`) and waits for the address it logs once it listens; it may take up to 10 s. */
async function start(home: string, environment: Record<string, string>) {
  mkdirSync(join(home, "tmp"), { recursive: true });
  const started = Bun.spawn([join(dir, "voxroute")], { cwd: home, env: environment, stdout: Bun.file(join(home, "log")), stderr: "inherit" });
  const log = () => readFileSync(join(home, "log"), "utf8");
  for (let i = 0; i < 200 && started.exitCode === null; i++) {
    const line = log()
      .split("\n")
      .find((l) => l.includes('"msg":"voxroute listening"'));
    if (line) {
      const { host, port } = JSON.parse(line);
      return { proc: started, url: `http://${host}:${port}` };
    }
    await Bun.sleep(50);
  }
  throw new Error(`the executable did not start: ${log()}`);
}

/** The operator CLI, run in `home` (whose ./data it works on). */
function cli(home: string, ...args: string[]): string {
  const run = Bun.spawnSync([join(dir, "voxroute"), ...args], { cwd: home, env: env(home) });
  if (run.exitCode !== 0) throw new Error(`voxroute ${args.join(" ")} exited ${run.exitCode}: ${run.stderr.toString()}`);
  return run.stdout.toString();
}

/** A new key with a dollar of credits, made by the CLI in `home`. */
const newKey = (home: string) => cli(home, "keys", "create", "--tenant", "smoke", "--usd", "1").trim().split("\n").at(-1)!;

describe.skipIf(!localSttAvailable)("the single executable", () => {
  beforeAll(async () => {
    const build = Bun.spawnSync(["bun", "run", "build"], { cwd: ROOT, stderr: "pipe" });
    if (build.exitCode !== 0) throw new Error(`bun run build failed: ${build.stderr.toString()}`);
    dir = mkdtempSync(join(tmpdir(), "voxroute-binary-"));
    copyFileSync(join(ROOT, "dist/voxroute"), join(dir, "voxroute"));
    ({ proc, url } = await start(dir, env()));
  }, 60_000);

  afterAll(async () => {
    if (proc && proc.exitCode === null) {
      proc.kill("SIGKILL");
      await proc.exited;
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("keeps the memory it touched: started without an allocator setting, the same process runs with MIMALLOC_PURGE_DELAY=-1", () => {
    const environ = readFileSync(`/proc/${proc.pid}/environ`, "utf8").split("\0");
    expect(environ).toContain("MIMALLOC_PURGE_DELAY=-1");
    expect(environ).toContain(`TMPDIR=${join(dir, "tmp")}`);
  });

  let key: string;
  test("keeps its database in ./data, and runs the operator CLI on it", () => {
    expect(existsSync(join(dir, "data/voxroute.sqlite"))).toBe(true);
    key = newKey(dir);
    expect(key).toStartWith("vxr_");
  });

  test.each([
    ["flite", "slt", "mp3", "mp3"],
    ["pico", "en-US", "opus", "opus"],
  ])("speech from %s (%s) as %s", async (model, voice, format, codec) => {
    const res = await fetch(`${url}/oai/audio/speech`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ model, voice, input: "The executable speaks on its own.", response_format: format }),
    });
    expect(res.status).toBe(200);
    const probed = await ffprobe(new Uint8Array(await res.arrayBuffer()), format === "opus" ? "ogg" : format);
    expect(probed.codec).toBe(codec);
    expect(probed.seconds).toBeGreaterThan(1);
  });

  test("PocketSphinx transcribes a recording, its turn decided by the router VAD", async () => {
    const { events, close } = await transcribeRecording(url, key);
    expect(close.code).toBe(1000);
    expect(events.find((e) => e.type === "stt.signal" && e.signal === "started")).toMatchObject({ origin: "router", basis: ["vad"] });
    expect(events.find((e) => e.type === "stt.transcript.final")?.text).toContain("thank you");
  });

  test("a router VAD that could not load is loaded again by the next session, once its library can be unpacked", async () => {
    // A second executable whose cache directory cannot be made at first: a file stands where
    // XDG_CACHE_HOME's directory should be. One audio worker, so both sessions ask the same one.
    const home = join(dir, "blocked");
    mkdirSync(home);
    const environment = { ...env(home), AUDIO_WORKERS: "1" };
    writeFileSync(environment.XDG_CACHE_HOME, "");
    const second = await start(home, environment);
    try {
      const secondKey = newKey(home);
      const failed = await transcribeRecording(second.url, secondKey);
      expect(failed.close.code).toBe(1011);
      expect(failed.events.find((e) => e.type === "stt.error")).toMatchObject({ code: "upstream_error" });
      rmSync(environment.XDG_CACHE_HOME);
      const { events, close } = await transcribeRecording(second.url, secondKey);
      expect(close.code).toBe(1000);
      expect(events.find((e) => e.type === "stt.transcript.final")?.text).toContain("thank you");
    } finally {
      second.proc.kill("SIGKILL");
      await second.proc.exited;
    }
  }, 60_000);

  test("exports OpenTelemetry traces over OTLP/HTTP from inside itself when an endpoint is set, continuing the client's trace", async () => {
    const receiver = startFakeOtlpReceiver();
    const home = join(dir, "traced");
    mkdirSync(home);
    const traced = await start(home, { ...env(home), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20" });
    try {
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
      const res = await fetch(`${traced.url}/oai/audio/speech`, {
        method: "POST",
        headers: { ...bearer(newKey(home)), "content-type": "application/json", traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
        body: JSON.stringify({ model: "flite", voice: "slt", input: "Traced.", response_format: "mp3" }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      const spans = await receiver.waitFor(traceId, "POST /oai/audio/speech");
      expect(spans.find((s) => s.name === "POST /oai/audio/speech")).toMatchObject({ parentSpanId: "00f067aa0ba902b7", resource: { "service.name": "voxroute" } });
      expect(spans.map((s) => s.name).sort()).toEqual(["POST /oai/audio/speech", "admission", "ledger.hold", "ledger.settle", "provider.attempt", "routing"]);
    } finally {
      traced.proc.kill("SIGKILL");
      await traced.proc.exited;
      receiver.stop();
    }
  }, 60_000);

  test("serves its OpenAPI and AsyncAPI documents, and the reference page with every file of it, from inside itself", async () => {
    for (const path of ["/openapi.json", "/asyncapi.json", REFERENCE_PATH]) expect([path, (await fetch(`${url}${path}`)).status]).toEqual([path, 200]);
    for (const [path, file] of Object.entries(REFERENCE_ASSETS)) {
      const res = await fetch(`${url}${path}`);
      expect([path, res.status, (await res.arrayBuffer()).byteLength]).toEqual([path, 200, Bun.file(file).size]);
    }
  });

  test("serves the dashboard from inside itself: the page, and the script and styles bundled at build time", async () => {
    const html = await (await fetch(`${url}/dashboard`)).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/chunk-[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.map((a) => a.split(".").at(-1)).sort()).toEqual(["css", "js"]);
    for (const asset of assets) {
      const res = await fetch(`${url}${asset}`);
      expect(res.status).toBe(200);
      expect((await res.text()).length).toBeGreaterThan(1000);
    }
  });

  test("its CLI writes a local certificate, with which it serves https (curl --cacert) and, after SIGHUP, a new one", async () => {
    const home = join(dir, "tls");
    mkdirSync(home);
    const files = { ca: join(home, "data/tls/ca.pem"), cert: join(home, "data/tls/cert.pem"), key: join(home, "data/tls/key.pem") };
    expect(cli(home, "tls", "self-signed")).toContain(`NODE_EXTRA_CA_CERTS=${files.ca}`);
    const second = await start(home, { ...env(home), TLS_CERT_FILE: files.cert, TLS_KEY_FILE: files.key });
    try {
      const healthz = `https://localhost:${new URL(second.url).port}/healthz`;
      const curl = (ca: string) => Bun.spawnSync(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--cacert", ca, healthz]).stdout.toString();
      expect(curl(files.ca)).toBe("200");
      copyFileSync(files.ca, join(home, "first-ca.pem"));
      cli(home, "tls", "self-signed", "--force");
      second.proc.kill("SIGHUP");
      for (let i = 0; i < 100 && !readFileSync(join(home, "log"), "utf8").includes("TLS certificate reloaded"); i++) await Bun.sleep(50);
      expect(curl(files.ca)).toBe("200");
      expect(curl(join(home, "first-ca.pem"))).toBe("000"); // the first authority signed none of what is served now
    } finally {
      second.proc.kill("SIGKILL");
      await second.proc.exited;
    }
  }, 60_000);

  test("stops cleanly on SIGTERM, leaving in its temporary directory only the native addons Bun unpacked there, and no telemetry of onnxruntime's in its cache", async () => {
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    // Bun's single executable writes each embedded .node addon to the temporary directory to load it (`.bun-…node`); the rest would be ours.
    expect(readdirSync(join(dir, "tmp")).filter((name) => !/^\.bun-.*\.node$/.test(name))).toEqual([]);
    expect(readdirSync(join(dir, "cache"))).toEqual(["voxroute"]);
  });
});
