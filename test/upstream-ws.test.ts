import { expect, test } from "bun:test";
import { ProviderError } from "../src/errors.ts";
import { JsonSocketStream, openUpstreamSocket, openUpstreamStreams } from "../src/providers/upstream-ws.ts";

// The shared upstream socket stream: what an upstream or an adapter does wrong fails the stream,
// never the process, and leaves nothing open.

function upstream(frames: string[]) {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response("no", { status: 400 })),
    websocket: {
      open: (ws) => {
        for (const f of frames) ws.send(f);
      },
      message() {},
    },
  });
}

async function drain(stream: AsyncIterable<unknown>): Promise<unknown> {
  try {
    for await (const _ of stream);
  } catch (err) {
    return err;
  }
}

test("an adapter that throws on a frame fails its stream with a retryable ProviderError", async () => {
  const server = upstream(['{"type":"odd"}']);
  const before = openUpstreamStreams();
  const ws = await openUpstreamSocket("test", `ws://127.0.0.1:${server.port}`);
  const stream = new JsonSocketStream<string>("test", ws, 1000, {
    onJson() {
      throw new TypeError("cannot read properties of undefined");
    },
  });
  const err = await drain(stream);
  expect(err).toBeInstanceOf(ProviderError);
  expect(err).toMatchObject({ retryable: true, message: "test sent a frame this adapter could not read: cannot read properties of undefined" });
  expect(openUpstreamStreams()).toBe(before);
  server.stop(true);
});

test("a frame that is not JSON, and silence while an answer is owed, fail the stream too", async () => {
  const server = upstream(["not json"]);
  const ws = await openUpstreamSocket("test", `ws://127.0.0.1:${server.port}`);
  expect(await drain(new JsonSocketStream<string>("test", ws, 1000, { onJson() {} }))).toMatchObject({ message: "test sent a frame that is not JSON" });
  const quiet = upstream([]);
  const silent = new JsonSocketStream<string>("test", await openUpstreamSocket("test", `ws://127.0.0.1:${quiet.port}`), 100, { onJson() {} });
  silent.expectAnswer();
  expect(await drain(silent)).toMatchObject({ message: "test went silent for 100 ms" });
  server.stop(true);
  quiet.stop(true);
});
