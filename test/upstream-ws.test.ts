import { expect, test } from "bun:test";
import { ProviderError } from "../src/errors.ts";
import { JsonSocketStream, openUpstreamSocket, openUpstreamStreams } from "../src/providers/upstream-ws.ts";
import { type ReadPace, slowReading } from "./fakes/slow-reading.ts";

// The shared upstream socket stream: what an upstream or an adapter does wrong fails the stream,
// never the process, and leaves nothing open.

/**
 * A loopback upstream: it sends `greeting` once a socket opens, and reads what it is sent as fast
 * as it comes, at `pace` (slow-reading.ts), or "never" (its socket paused from the start). Each
 * frame read goes into `frames` (binary ones as "audio").
 */
function upstream(greeting: string[], pace?: ReadPace | "never", frames: string[] = []) {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response("no", { status: 400 })),
    websocket: {
      open: (ws) => {
        if (pace === "never") ws.pause();
        for (const f of greeting) ws.send(f);
      },
      message: (ws, frame) => {
        if (typeof pace === "function") pace(ws, typeof frame === "string" ? frame.length : frame.byteLength);
        frames.push(typeof frame === "string" ? frame : "audio");
      },
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

/** Sends audio until some of it waits in the socket's buffer (the kernel's buffers are full), then `moreBytes` besides. */
function sendUntilBuffered(stream: JsonSocketStream<string>, moreBytes: number): void {
  const frame = new Uint8Array(64 * 1024);
  for (let sent = 0; stream.bufferedAmount === 0 && sent < 256 * 2 ** 20; sent += frame.byteLength) stream.send(frame);
  expect(stream.bufferedAmount).toBeGreaterThan(0);
  for (let sent = 0; sent < moreBytes; sent += frame.byteLength) stream.send(frame);
}

test("an upstream that stops reading: what was sent waits in bufferedAmount, and once it has taken nothing for the idle timeout the stream fails", async () => {
  const server = upstream([], "never");
  const before = openUpstreamStreams();
  const stream = new JsonSocketStream<string>("test", await openUpstreamSocket("test", `ws://127.0.0.1:${server.port}`), 300, { onJson() {} });
  sendUntilBuffered(stream, 2 ** 20);
  expect(await drain(stream)).toMatchObject({ retryable: true, message: "test read nothing of what was sent for 300 ms" });
  expect(openUpstreamStreams()).toBe(before);
  server.stop(true);
});

test("an upstream that reads slowly is not given up: its buffer drains, and the stream ends normally", async () => {
  const server = upstream([], slowReading(8 * 2 ** 20));
  const stream = new JsonSocketStream<string>("test", await openUpstreamSocket("test", `ws://127.0.0.1:${server.port}`), 2000, { onJson() {} });
  sendUntilBuffered(stream, 32 * 2 ** 20); // seconds of reading, longer than the idle timeout
  const ended = drain(stream);
  while (stream.bufferedAmount > 0) await Bun.sleep(50);
  stream.finish();
  expect(await ended).toBeUndefined();
  server.stop(true);
});

test("no keep-alive goes while what was sent still waits to go out: a recording paced on the buffer gets none between its pieces", async () => {
  const frames: string[] = [];
  const server = upstream([], slowReading(2 * 2 ** 20), frames);
  const stream = new JsonSocketStream<string>("test", await openUpstreamSocket("test", `ws://127.0.0.1:${server.port}`), 10_000, { onJson() {}, keepAlive: { everyMs: 400, frame: "keep-alive" } });
  sendUntilBuffered(stream, 8 * 2 ** 20); // seconds of reading, nothing sent meanwhile
  while (stream.bufferedAmount > 64 * 1024) await Bun.sleep(10);
  stream.send(new Uint8Array(1024)); // the next piece
  stream.send("end");
  while (!frames.includes("end")) await Bun.sleep(20);
  expect(frames.slice(0, frames.indexOf("end")).filter((f) => f !== "audio")).toEqual([]); // once nothing waits, keep-alives go again
  stream.cancel();
  server.stop(true);
});
