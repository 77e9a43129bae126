import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pino from "pino";
import { createKey } from "./helpers/accounts.ts";
import { createApp } from "../src/app.ts";
import { openDatabase } from "../src/db/open.ts";
import { BODY_LIMITS } from "../src/surfaces/request-body.ts";
import { rssGrowthDuring } from "./helpers/rss.ts";
import { spawnServer, type ServerProcess } from "./helpers/process.ts";
import { PICO_DIR, startTestServer, testConfig } from "./helpers/server.ts";

// Request bodies are capped per route and refused in the surface's envelope before they are
// buffered. The server runs as its own process so that its memory can be read from /proc while
// oversized bodies arrive, declared (Content-Length) or chunked.

const AUDIO_LIMIT = 1024 * 1024;
const MiB = 1024 * 1024;

let server: ServerProcess;
let key: string;

beforeAll(async () => {
  const databaseUrl = testConfig().databaseUrl;
  const database = await openDatabase(databaseUrl);
  key = (await createKey(database, "limits")).key;
  await database.close();
  server = await spawnServer({ DATABASE_URL: databaseUrl, TTS_WORKERS: "1", MAX_AUDIO_UPLOAD_BYTES: String(AUDIO_LIMIT), PICO_VOICES_DIR: PICO_DIR, PICO_VOICES_URL: "" });
}, 30_000);
afterAll(async () => {
  server.proc.kill("SIGTERM");
  await server.proc.exited;
});

const growthDuring = <T>(work: () => Promise<T>) => rssGrowthDuring(server.proc.pid, work);

/** A body of `total` bytes sent without a Content-Length (chunked), produced as it is read. */
function chunkedBody(total: number, fill = 0x20): ReadableStream<Uint8Array> {
  const chunk = new Uint8Array(MiB).fill(fill);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= total) return controller.close();
      const n = Math.min(chunk.length, total - sent);
      controller.enqueue(chunk.subarray(0, n));
      sent += n;
    },
  });
}

const answer = async (res: Response) => ({ status: res.status, retry: res.headers.get("x-should-retry"), body: (await res.json()) as Record<string, any> });

function multipart(bytes: Uint8Array, fields: Record<string, string>): FormData {
  const form = new FormData();
  form.append("file", new Blob([bytes], { type: "audio/wav" }), "big.wav");
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return form;
}

describe("JSON bodies without a key", () => {
  test("four 100 MB bodies to signup are refused 413 payload_too_large; the server's memory does not follow them", async () => {
    await fetch(`${server.url}/account/agent-signup`, { method: "POST", body: "{}" }); // the route is warm
    const huge = new Uint8Array(100 * MiB).fill(0x20);
    const { result, growthMiB } = await growthDuring(() =>
      Promise.all(Array.from({ length: 4 }, () => fetch(`${server.url}/account/agent-signup`, { method: "POST", headers: { "content-type": "application/json" }, body: huge }).then(answer))),
    );
    for (const r of result) expect(r).toMatchObject({ status: 413, retry: "false", body: { error: "payload_too_large" } });
    expect(growthMiB).toBeLessThan(40);
  }, 20_000);

  test("a chunked body with no Content-Length is read only up to the limit", async () => {
    const { result, growthMiB } = await growthDuring(() =>
      fetch(`${server.url}/account/agent-signup`, { method: "POST", headers: { "content-type": "application/json" }, body: chunkedBody(100 * MiB) }).then(answer),
    );
    expect(result).toMatchObject({ status: 413, body: { error: "payload_too_large", limit_bytes: BODY_LIMITS.account } });
    expect(growthMiB).toBeLessThan(40);
  }, 20_000);

  test("a body over the route's own limit, under the server-wide one, is refused by the route", async () => {
    const body = JSON.stringify({ email: "a@b.c", padding: "x".repeat(BODY_LIMITS.account) });
    const res = await answer(await fetch(`${server.url}/account/agent-signup/verify`, { method: "POST", headers: { "content-type": "application/json" }, body }));
    expect(res).toMatchObject({ status: 413, body: { error: "payload_too_large", limit_bytes: BODY_LIMITS.account } });
    // The server keeps serving on the same address.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  }, 20_000);
});

describe("each surface answers 413 in its own envelope", () => {
  const speechBody = (size: number) => JSON.stringify({ model: "flite", input: "x", padding: "y".repeat(size) });

  test("/oai/audio/speech: the OpenAI error object", async () => {
    const res = await answer(await fetch(`${server.url}/oai/audio/speech`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: speechBody(BODY_LIMITS.speech) }));
    expect(res).toMatchObject({ status: 413, body: { error: { code: "payload_too_large", type: "invalid_request_error" } } });
  }, 20_000);

  test("/el text to speech: {detail}; 40,000 characters written as JSON escapes still fit", async () => {
    const tts = (body: string) =>
      fetch(`${server.url}/el/v1/text-to-speech/slt?output_format=mp3_44100_100`, { method: "POST", headers: { "xi-api-key": key, "content-type": "application/json" }, body });
    const tooBig = await answer(await tts(JSON.stringify({ text: "x", model_id: "flite", padding: "y".repeat(BODY_LIMITS.speech) })));
    expect(tooBig).toMatchObject({ status: 413, body: { detail: { status: "payload_too_large" } } });
    // The longest text /el accepts, each character spelled \uXXXX: read whole, then refused for its output format.
    const escaped = JSON.stringify({ text: "语".repeat(40_000), model_id: "flite" }).replace(/[^ -~]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    expect(escaped.length).toBeGreaterThan(240_000);
    expect(await answer(await tts(escaped))).toMatchObject({ status: 400, body: { detail: { status: "invalid_output_format" } } });
  }, 20_000);

  test("audio uploads over MAX_AUDIO_UPLOAD_BYTES, on every transcription surface", async () => {
    const audio = new Uint8Array(AUDIO_LIMIT + 1);
    const native = await answer(
      await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "audio/wav" }, body: audio }),
    );
    expect(native).toMatchObject({ status: 413, body: { error: "payload_too_large", limit_bytes: AUDIO_LIMIT } });
    const nativeForm = await answer(
      await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: multipart(audio, { model: "pocketsphinx" }) }),
    );
    expect(nativeForm).toMatchObject({ status: 413, body: { error: "payload_too_large" } });
    const el = await answer(await fetch(`${server.url}/el/v1/speech-to-text`, { method: "POST", headers: { "xi-api-key": key }, body: multipart(audio, { model_id: "pocketsphinx" }) }));
    expect(el).toMatchObject({ status: 413, body: { detail: { status: "payload_too_large" } } });
    const oai = await answer(await fetch(`${server.url}/oai/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: multipart(audio, { model: "pocketsphinx" }) }));
    expect(oai).toMatchObject({ status: 413, body: { error: { code: "payload_too_large", type: "invalid_request_error" } } });
    // Far past every limit: refused before routing, still in the surface's envelope.
    const huge = await answer(
      await fetch(`${server.url}/oai/audio/transcriptions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "multipart/form-data; boundary=x" },
        body: new Uint8Array(50 * MiB),
      }),
    );
    expect(huge).toMatchObject({ status: 413, body: { error: { code: "payload_too_large" } } });
  }, 20_000);

  test("a chunked audio upload is cut at the limit", async () => {
    const { result, growthMiB } = await growthDuring(() =>
      fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "audio/wav" },
        body: chunkedBody(100 * MiB, 0),
      }).then(answer),
    );
    expect(result).toMatchObject({ status: 413, body: { error: "payload_too_large", limit_bytes: AUDIO_LIMIT } });
    expect(growthMiB).toBeLessThan(40);
  }, 20_000);

  test("an upload under the audio limit but over the JSON limits is read", async () => {
    const res = await answer(
      await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "audio/wav" },
        body: new Uint8Array(AUDIO_LIMIT - 1024),
      }),
    );
    expect(res.status).not.toBe(413);
    expect(res.status).toBeLessThan(500);
  }, 20_000);
});

test("a realtime profile at every one of its own bounds fits its body limit", async () => {
  const server = await startTestServer();
  try {
    const map = (prefix: string) => Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`${prefix}${i}`.padEnd(100, "k"), "é".repeat(2000)]));
    const pipeline = {
      stt: { model: "pocketsphinx", provider_options: map("s") },
      tts: { model: "flite", voice: "slt", provider_options: map("t") },
      upstream: { url: "wss://app.example/voice", headers: map("x-h") },
    };
    const body = JSON.stringify({ name: "n".repeat(200), pipeline });
    expect(new TextEncoder().encode(body).length).toBeGreaterThan(600_000);
    const res = await fetch(`${server.url}/v1/realtime/profiles`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body });
    expect(res.status).toBe(201);
  } finally {
    await server.stop(0);
  }
}, 20_000);

test("no route leaves its body to Elysia's unbounded parsers", async () => {
  const server = await startTestServer({ SANDBOX_PAYMENTS: "true" });
  try {
    const routes = createApp(server.ctx).routes.filter((r) => !["GET", "HEAD", "WS"].includes(r.method));
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const parse = (route.hooks as { parse?: unknown }).parse;
      const declared = Array.isArray(parse) ? parse.map((p: { fn?: unknown }) => p.fn ?? p) : [parse];
      expect({ route: `${route.method} ${route.path}`, parse: declared }).toEqual({ route: `${route.method} ${route.path}`, parse: ["none"] });
    }
  } finally {
    await server.stop(0);
  }
}, 20_000);

test("a client that vanishes mid-body is no server error", async () => {
  const errors: Record<string, any>[] = [];
  const log = pino({ level: "error" }, { write: (line: string) => void errors.push(JSON.parse(line)) });
  const server = await startTestServer({}, { log });
  try {
    const { hostname, port } = new URL(server.url);
    const socket = await Bun.connect({ hostname, port: Number(port), socket: { data() {} } });
    socket.write(`POST /account/agent-signup HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email": "a@`);
    await Bun.sleep(100);
    socket.end();
    await Bun.sleep(200);
    expect(errors).toEqual([]);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  } finally {
    await server.stop(0);
  }
}, 20_000);
