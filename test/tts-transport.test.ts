import { expect, test } from "bun:test";
import { ttsTransport } from "../src/providers/tts-transport.ts";

test("transport: websocket by default or when named, http when named, anything else refused as the caller's error", () => {
  expect(ttsTransport("x", {})).toBe("websocket");
  expect(ttsTransport("x", { transport: "websocket" })).toBe("websocket");
  expect(ttsTransport("x", { transport: "http" })).toBe("http");
  expect(() => ttsTransport("x", { transport: "grpc" })).toThrow('x option transport must be websocket or http, not "grpc"');
});
