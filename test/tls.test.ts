import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { loadConfig } from "../src/config.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { recorder } from "./helpers/oai-realtime.ts";
import { until } from "./helpers/realtime.ts";
import { startRefusal, startTestServer, testConfig, type TestServer } from "./helpers/server.ts";
import { concat, silence, speak, to24k } from "./helpers/speech.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// TLS in the router itself (docs/operations.md#tls): the CLI's local certificate, https and wss on
// the port with no proxy in front, OpenAI's realtime SDK over wss, new certificates on SIGHUP.

const ROOT = new URL("..", import.meta.url).pathname;

/** `bun run cli tls self-signed` into a new folder (or `dir`, replacing its files): its output and the three files. */
function selfSigned(dir = tempDir("voxroute-tls-"), ...flags: string[]) {
  const run = Bun.spawnSync(["bun", "src/cli.ts", "tls", "self-signed", "--dir", dir, ...flags], { cwd: ROOT });
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  return {
    exitCode: run.exitCode,
    stdout: run.stdout.toString(),
    stderr: run.stderr.toString(),
    dir,
    ca: () => read("ca.pem"),
    certFile: join(dir, "cert.pem"),
    keyFile: join(dir, "key.pem"),
    caFile: join(dir, "ca.pem"),
  };
}

/** The subject of the certificate a new TLS connection to `port` is shown (openssl, a client that is not ours). */
async function servedIssuer(port: number): Promise<string> {
  const probe = Bun.spawn(["sh", "-c", `openssl s_client -connect 127.0.0.1:${port} </dev/null 2>/dev/null | openssl x509 -noout -issuer`]);
  return (await new Response(probe.stdout).text()).trim();
}
const issuerOf = (pem: string) =>
  Bun.spawnSync(["openssl", "x509", "-noout", "-issuer"], { stdin: Buffer.from(pem) })
    .stdout.toString()
    .trim();

let local: ReturnType<typeof selfSigned>;
let server: TestServer;
beforeAll(async () => {
  local = selfSigned();
  server = await startTestServer({ TLS_CERT_FILE: local.certFile, TLS_KEY_FILE: local.keyFile });
});
afterAll(() => server.stop(0));

describe("tls self-signed", () => {
  test("writes an authority and a server certificate it signed, for localhost and the loopback addresses, and says how to trust it", () => {
    expect(local.exitCode).toBe(0);
    expect(local.stdout).toContain(`NODE_EXTRA_CA_CERTS=${local.caFile}`);
    expect(local.stdout).toContain(`TLS_CERT_FILE=${local.certFile} TLS_KEY_FILE=${local.keyFile}`);
    const verify = Bun.spawnSync(["openssl", "verify", "-CAfile", local.caFile, local.certFile]);
    expect(verify.stdout.toString().trim()).toBe(`${local.certFile}: OK`);
    const text = Bun.spawnSync(["openssl", "x509", "-noout", "-ext", "subjectAltName,basicConstraints", "-in", local.certFile]).stdout.toString();
    expect(text).toContain("DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1");
    expect(text).toContain("CA:FALSE");
    expect(Bun.spawnSync(["stat", "-c", "%a", local.keyFile]).stdout.toString().trim()).toBe("600");
    // It keeps what is there unless told.
    const again = selfSigned(local.dir);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain("already exist: pass --force to replace them");
  });
});

describe("https and wss on the router's port", () => {
  test("a client trusting the authority through NODE_EXTRA_CA_CERTS reaches it over https; one that does not is refused", async () => {
    expect(server.url).toStartWith("https://127.0.0.1:");
    const script = `fetch(${JSON.stringify(`${server.url}/healthz`)}).then((r) => console.log(r.status), (e) => console.log("refused", e.code ?? e.message))`;
    // Another process (this one serves): node, as an SDK user runs it.
    const node = async (extraCa: string) => {
      const run = Bun.spawn(["node", "-e", script], { env: { ...process.env, NODE_EXTRA_CA_CERTS: extraCa }, stdout: "pipe" });
      return (await new Response(run.stdout).text()).trim();
    };
    expect(await node(local.caFile)).toBe("200");
    expect(await node("")).toStartWith("refused");
    // The realtime SDK in node, as the recipe of docs/compat-oai.md runs it: trust from the environment alone.
    const realtime = [
      'import OpenAI from "openai"; import { OpenAIRealtimeWS } from "openai/realtime/ws";',
      `const rt = new OpenAIRealtimeWS({ intent: "transcription" }, new OpenAI({ apiKey: ${JSON.stringify(server.key)}, baseURL: ${JSON.stringify(`${server.url}/oai`)} }));`,
      'rt.on("session.created", (e) => { console.log(e.session.type); rt.close(); });',
      'rt.on("error", (e) => { console.log("error", e.message); rt.close(); });',
    ].join("\n");
    const run = Bun.spawn(["node", "--input-type=module", "-e", realtime], { cwd: ROOT, env: { ...process.env, NODE_EXTRA_CA_CERTS: local.caFile }, stdout: "pipe" });
    expect((await new Response(run.stdout).text()).trim()).toBe("transcription");
    const plain = await fetch(`${server.url.replace("https:", "http:")}/healthz`).catch((e: Error) => e);
    expect(plain).toBeInstanceOf(Error); // the port speaks TLS only
  });

  test("the OpenAI SDK over https: speech as MP3", async () => {
    const { key } = await fundedAccount(server);
    const client = new OpenAI({ apiKey: key, baseURL: `${server.url}/oai`, maxRetries: 0, fetchOptions: { tls: { ca: local.ca() } } as never });
    const speech = await client.audio.speech.create({ model: "flite", voice: "slt", input: "Served over TLS." });
    expect(await ffprobe(new Uint8Array(await speech.arrayBuffer()), "mp3")).toMatchObject({ codec: "mp3" });
  });

  test.skipIf(!localSttAvailable)(
    "OpenAIRealtimeWS over wss to the router itself: a transcription session transcribes real speech",
    async () => {
      const { key } = await fundedAccount(server);
      const sdk = new OpenAI({ apiKey: key, baseURL: `${server.url}/oai` });
      const rt = new OpenAIRealtimeWS({ intent: "transcription", options: { ca: local.ca() } }, sdk);
      const r = recorder(rt);
      await until(() => r.of("session.created").length === 1, 15_000);
      rt.send({ type: "session.update", session: { type: "transcription", audio: { input: { format: { type: "audio/pcm", rate: 24000 }, transcription: { model: "pocketsphinx" } } } } } as never);
      await until(() => r.of("session.updated").length === 1, 15_000);
      await r.append(to24k(concat([silence(300), speak("Thank you very much for your help."), silence(1000)])), 4800);
      await until(() => r.of("conversation.item.input_audio_transcription.completed").length === 1, 15_000);
      rt.close();
      expect(r.of("conversation.item.input_audio_transcription.completed")[0]?.transcript).toBe("thank you very much for your help");
      expect(r.of("error")).toEqual([]);
    },
    30_000,
  );
});

describe("new certificates", () => {
  test("reloadTls: new connections get the new certificate; a socket opened before goes on; a pair that cannot serve leaves the old one serving", async () => {
    const files = selfSigned();
    const own = await startTestServer({ TLS_CERT_FILE: files.certFile, TLS_KEY_FILE: files.keyFile });
    try {
      const port = Number(new URL(own.url).port);
      const first = files.ca();
      expect(await servedIssuer(port)).toBe(issuerOf(first));
      const before = new WebSocket(`${own.wsUrl("/v1/tts")}?model=flite&voice=slt`, { headers: { authorization: `Bearer ${own.key}` }, tls: { ca: first } } as never);
      const frames: string[] = [];
      let audioBytes = 0;
      before.onmessage = (e) => (typeof e.data === "string" ? frames.push(e.data) : (audioBytes += (e.data as ArrayBuffer).byteLength));
      await new Promise((resolve, reject) => {
        before.onopen = resolve;
        before.onerror = reject;
      });

      const replaced = selfSigned(files.dir, "--force");
      expect(replaced.exitCode).toBe(0);
      own.reloadTls();
      expect(await servedIssuer(port)).toBe(issuerOf(replaced.ca()));
      expect((await fetch(`${own.url}/healthz`, { tls: { ca: replaced.ca() } } as never)).status).toBe(200);
      expect(await fetch(`${own.url}/healthz`, { tls: { ca: first } } as never).catch((e: Error) => e)).toBeInstanceOf(Error);

      // The socket of before the reload still speaks: text in, audio and its end out.
      before.send(JSON.stringify({ type: "text", text: "Still here." }));
      before.send(JSON.stringify({ type: "close" }));
      const closed = await new Promise<number>((resolve) => (before.onclose = (e) => resolve(e.code)));
      expect(closed).toBe(1000);
      expect(frames.some((f) => f.includes('"service.tts_session_ended"'))).toBe(true);
      expect(audioBytes).toBeGreaterThan(0);

      // A key that is not the certificate's: the served certificate stays.
      Bun.spawnSync(["cp", local.keyFile, replaced.keyFile]);
      own.reloadTls();
      expect(await servedIssuer(port)).toBe(issuerOf(replaced.ca()));
    } finally {
      await own.stop(0);
    }
  }, 30_000);

  test("SIGHUP to the server process reloads the files (bun src/main.ts)", async () => {
    const files = selfSigned();
    const proc = Bun.spawn(["bun", "src/main.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "info",
        TTS_WORKERS: "1",
        AUDIO_WORKERS: "1",
        DATABASE_URL: testConfig().databaseUrl,
        TLS_CERT_FILE: files.certFile,
        TLS_KEY_FILE: files.keyFile,
      },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const lines = logLines(proc.stdout);
      const listening = await lines.find((l) => l.msg === "voxroute listening");
      expect(listening.tls).toBe(true);
      const port = listening.port as number;
      expect(await servedIssuer(port)).toBe(issuerOf(files.ca()));
      const replaced = selfSigned(files.dir, "--force");
      proc.kill("SIGHUP");
      await lines.find((l) => String(l.msg).startsWith("TLS certificate reloaded"));
      expect(await servedIssuer(port)).toBe(issuerOf(replaced.ca()));
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  }, 30_000);
});

describe("refused at start", () => {
  test("one file without the other, a file that cannot be read, a key that is not the certificate's", async () => {
    expect(() => loadConfig({ TLS_CERT_FILE: local.certFile })).toThrow("config: TLS_CERT_FILE and TLS_KEY_FILE go together: set both (PEM files) or neither");
    const refused = startRefusal;
    expect(await refused({ TLS_CERT_FILE: "/nonexistent/cert.pem", TLS_KEY_FILE: local.keyFile })).toStartWith("config: TLS_CERT_FILE /nonexistent/cert.pem cannot be read");
    const other = selfSigned();
    expect(await refused({ TLS_CERT_FILE: local.certFile, TLS_KEY_FILE: other.keyFile })).toStartWith(
      `config: TLS_CERT_FILE ${local.certFile} and TLS_KEY_FILE ${other.keyFile} are not a PEM certificate and its key: `,
    );
    expect(await refused({ TLS_CERT_FILE: local.caFile.replace("ca.pem", "key.pem"), TLS_KEY_FILE: local.keyFile })).toContain("are not a PEM certificate and its key");
  });
});

/** A process's JSON log lines as they come: `find` waits for the first (from the start) that matches. */
function logLines(stream: ReadableStream<Uint8Array>) {
  const seen: Record<string, unknown>[] = [];
  let wake = () => {};
  let ended = false;
  (async () => {
    let text = "";
    for await (const chunk of stream) {
      text += new TextDecoder().decode(chunk);
      const parts = text.split("\n");
      text = parts.pop()!;
      for (const line of parts) if (line.startsWith("{")) seen.push(JSON.parse(line));
      wake();
    }
    ended = true;
    wake();
  })();
  return {
    async find(match: (line: Record<string, any>) => boolean): Promise<Record<string, any>> {
      for (;;) {
        const hit = seen.find(match);
        if (hit) return hit;
        if (ended) throw new Error(`the process ended; its log: ${JSON.stringify(seen)}`);
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
