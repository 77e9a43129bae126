import { expect, test } from "bun:test";
import { upstreamErrorCode, upstreamFetch } from "../src/providers/upstream-http.ts";

// What an upstream's error answer may pass on to a client: its error code, never its free text,
// which can echo part of the key the router sent (OpenAI's 401 does).

test("an upstream 401 that echoes the key gives the client its code only", async () => {
  const key = "sk-abcd1234567890wxyzAB";
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => Response.json({ error: { message: `Incorrect API key provided: ${key.slice(0, 8)}****${key.slice(-4)}.`, type: "invalid_request_error", code: "invalid_api_key" } }, { status: 401 }),
  });
  try {
    const err = await upstreamFetch("openai", `http://127.0.0.1:${server.port}/`, { headers: { authorization: `Bearer ${key}` } }, 1000).catch((e) => e);
    expect(err.message).toBe("openai answered 401 (invalid_api_key)");
    expect(err.message).not.toContain(key.slice(0, 8));
  } finally {
    server.stop(true);
  }
});

test("codes are taken from the fields providers use, and only when they look like codes", () => {
  expect(upstreamErrorCode('{"detail":{"status":"voice_not_found","message":"A voice with id x was not found"}}')).toBe("voice_not_found");
  expect(upstreamErrorCode('{"err_code":"INVALID_AUTH","err_msg":"Invalid credentials."}')).toBe("INVALID_AUTH");
  expect(upstreamErrorCode('{"error":"Authentication error, API token missing/invalid"}')).toBeUndefined();
  expect(upstreamErrorCode("<html>bad gateway</html>")).toBeUndefined();
});
