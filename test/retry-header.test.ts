import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer } from "./helpers/ws-client.ts";

// SDKs retry 408, 409, 429 and 5xx unless told not to: every 4xx (the request's own fault) and 501
// (a path this service lacks) carries `x-should-retry: false`, on every surface, whichever way the
// route produced it; nothing else carries it.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

describe("x-should-retry: false on every 4xx of every surface, and only there", () => {
  const request = (path: string, init: RequestInit = {}) => fetch(`${server.url}${path}`, init);
  const json = (body: unknown, headers: Record<string, string> = {}) => ({ method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

  test("native, /oai and /el client errors, by whatever path the route produced them", async () => {
    const answers = await Promise.all([
      request("/v1/tts"), // 426
      request("/v1/no-such-endpoint"), // 404
      request("/account/balance"), // 401
      request("/v1/stt?model=nope", { headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" } }), // 400
      request("/oai/audio/speech", json({ model: "flite", input: "x" }, { authorization: "Bearer vx-wrong" })), // 401
      request("/oai/audio/speech", json({ model: "flite", voice: "slt", input: "x".repeat(5000) }, bearer(server.key))), // 413
      request("/oai/audio/speech", { method: "POST", headers: bearer(server.key), body: "not json" }), // 400
      request("/oai/chat/completions", json({}, bearer(server.key))), // 501
      request("/el/v1/text-to-speech/slt", json({ text: "x" })), // 401 flat
      request("/el/v1/text-to-speech/slt?output_format=mp3_44100_100", json({ text: "x", model_id: "flite" }, { "xi-api-key": server.key })), // 400
    ]);
    expect(answers.map((r) => [r.status, r.headers.get("x-should-retry")])).toEqual([
      [426, "false"],
      [404, "false"],
      [401, "false"],
      [400, "false"],
      [401, "false"],
      [413, "false"],
      [400, "false"],
      [501, "false"],
      [401, "false"],
      [400, "false"],
    ]);
  });

  test("answers that succeed say nothing about retrying", async () => {
    for (const res of [await request("/v1/models"), await request("/healthz"), await request("/oai/audio/speech", json({ model: "flite", voice: "slt", input: "Ok." }, bearer(server.key)))]) {
      expect(res.status).toBe(200);
      expect(res.headers.get("x-should-retry")).toBeNull();
      await res.arrayBuffer();
    }
  });
});
