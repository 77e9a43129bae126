import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { Writable } from "node:stream";
import { connect } from "node:net";
import { createLogger } from "../src/log.ts";
import { enterRequest } from "../src/request-context.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// x-request-id: on every answer (the client's own when it sends a sane one), in error bodies, in
// the logs of the request, and read by the OpenAI SDK (`err.requestID`, `withResponse().request_id`).

let server: TestServer;
const logged: Record<string, unknown>[] = [];
beforeAll(async () => {
  const sink = new Writable({
    write: (chunk, _enc, done) => {
      logged.push({ ...JSON.parse(String(chunk)), raw: String(chunk) });
      done();
    },
  });
  server = await startTestServer({}, { log: createLogger("info", sink) });
});
afterAll(() => server.stop(0));

const sdk = (apiKey: string, headers: Record<string, string> = {}) => new OpenAI({ apiKey, baseURL: `${server.url}/oai`, maxRetries: 0, defaultHeaders: headers });

describe("x-request-id", () => {
  test("generated when the client sends none, on success and on errors of every surface", async () => {
    const ok = await fetch(`${server.url}/healthz`);
    expect(ok.headers.get("x-request-id")).toMatch(/^req_[0-9a-f-]{36}$/);
    const native = await fetch(`${server.url}/v1/nowhere`);
    const nativeId = native.headers.get("x-request-id");
    expect(nativeId).toMatch(/^req_/);
    expect(await native.json()).toMatchObject({ error: "not_found", request_id: nativeId });
    const el = await fetch(`${server.url}/el/v1/nowhere`, { headers: { "xi-api-key": "sk-wrong" } });
    expect(await el.json()).toMatchObject({ detail: { request_id: el.headers.get("x-request-id") } });
  });

  test("on an answer refused before routing (a declared body over every limit)", async () => {
    const head = await rawHead("POST /v1/stt/transcriptions HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10000000000\r\nx-request-id: big-1\r\n\r\n");
    expect(head).toStartWith("HTTP/1.1 413");
    expect(head.toLowerCase()).toContain("x-request-id: big-1");
  });

  test("the client's id comes back; an insane one is replaced", async () => {
    const mine = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "trace-42/abc" } });
    expect(mine.headers.get("x-request-id")).toBe("trace-42/abc");
    const long = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "x".repeat(201) } });
    expect(long.headers.get("x-request-id")).toMatch(/^req_/);
    const control = await fetch(`${server.url}/healthz`, { headers: { "x-request-id": "a\u00e9b" } });
    expect(control.headers.get("x-request-id")).toMatch(/^req_/);
  });

  test("the OpenAI SDK reports it: requestID on errors, request_id with withResponse()", async () => {
    const err = await sdk("vx-not-a-key")
      .audio.speech.create({ model: "flite", voice: "slt", input: "x" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.APIError>).requestID).toMatch(/^req_/);

    const { key } = await fundedAccount(server);
    const { request_id } = await sdk(key, { "x-request-id": "my-own-id" }).audio.speech.create({ model: "flite", voice: "slt", input: "Hi.", response_format: "pcm" }).withResponse();
    expect(request_id).toBe("my-own-id");
  });

  test("on a WebSocket upgrade's 101", async () => {
    const { key } = await fundedAccount(server);
    const head = await rawHead(
      "GET /v1/tts?model=flite&voice=slt&format=pcm HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" +
        `Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${key}\r\nx-request-id: ws-id-1\r\n\r\n`,
    );
    expect(head).toStartWith("HTTP/1.1 101");
    expect(head.toLowerCase()).toContain("x-request-id: ws-id-1");
  });
});

/** Sends a raw HTTP request and reads the answer's status line and headers. */
function rawHead(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = "";
    const socket = connect(Number(new URL(server.url).port), "127.0.0.1", () => socket.write(request));
    socket.on("data", (chunk) => {
      got += chunk.toString("latin1");
      if (!got.includes("\r\n\r\n")) return;
      socket.destroy();
      resolve(got.slice(0, got.indexOf("\r\n\r\n")));
    });
    socket.on("error", reject);
  });
}

/** The server's lines with this request id, waiting briefly for one with `msg`. */
async function linesOf(requestId: string, msg: string) {
  for (let i = 0; i < 100 && !logged.some((l) => l.request_id === requestId && l.msg === msg); i++) await Bun.sleep(20);
  return logged.filter((l) => l.request_id === requestId);
}

describe("logs", () => {
  test("an HTTP request's session lines carry its id", async () => {
    const { key } = await fundedAccount(server);
    await (await sdk(key, { "x-request-id": "http-log-1" }).audio.speech.create({ model: "flite", voice: "slt", input: "Logged.", response_format: "pcm" })).arrayBuffer();
    const lines = await linesOf("http-log-1", "session closed");
    expect(lines.find((l) => l.msg === "session closed")).toMatchObject({ outcome: "completed", session: expect.any(String) });
  });

  test("a WebSocket session's lines, written from socket callbacks, carry the upgrade's id", async () => {
    const { key } = await fundedAccount(server);
    const ws = new WebSocket(server.wsUrl("/v1/tts?model=flite&voice=slt&format=pcm"), { headers: { authorization: `Bearer ${key}`, "x-request-id": "ws-log-1" } } as never);
    await new Promise((resolve) => (ws.onopen = resolve));
    ws.send(JSON.stringify({ type: "text", text: "Hello there. " }));
    ws.send(JSON.stringify({ type: "close" }));
    await new Promise((resolve) => (ws.onclose = resolve));
    const lines = await linesOf("ws-log-1", "session closed");
    const closed = lines.find((l) => l.msg === "session closed")!;
    expect(closed).toMatchObject({ outcome: "completed", channel: expect.any(String) });
    expect((closed.raw as string).split('"request_id"').length).toBe(2); // once: the bound id, not the mixin's too
  });

  test("a line written while serving a request carries its request_id; others none", async () => {
    const lines: Record<string, unknown>[] = [];
    const log = createLogger(
      "info",
      new Writable({
        write: (chunk, _enc, done) => {
          lines.push(JSON.parse(String(chunk)));
          done();
        },
      }),
    );
    log.info("outside");
    await (async () => {
      enterRequest("req_log_1", new Request("http://localhost/v1/tts"));
      await Bun.sleep(1);
      log.child({ session: "s" }).info("inside");
    })();
    expect(lines[0]).not.toHaveProperty("request_id");
    expect(lines[1]).toMatchObject({ request_id: "req_log_1", session: "s", msg: "inside" });
  });
});
