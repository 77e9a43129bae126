import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Server, ServerWebSocket } from "bun";
import { TurnCorkedSender } from "../src/surfaces/turn-corked-sender.ts";
import { countWrites, type Writes } from "./helpers/counted-writes.ts";

// A real Bun server and client: the server socket's sends and corks are counted where they happen.

interface Counted {
  sender: TurnCorkedSender;
  writes: Writes;
}

let server: Server<Counted>;
let opened: (c: Counted) => void;

beforeAll(() => {
  server = Bun.serve<Counted>({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req, srv) => (srv.upgrade(req, { data: {} as Counted }) ? undefined : new Response("upgrade", { status: 426 })),
    websocket: {
      open(ws) {
        const raw = ws as ServerWebSocket<Counted>;
        ws.data.writes = countWrites(raw);
        ws.data.sender = new TurnCorkedSender(raw as ServerWebSocket<unknown>);
        opened(ws.data);
      },
      message() {},
    },
  });
});
afterAll(() => server.stop(true));

async function connect(): Promise<{ counted: Counted; received: (string | number[])[]; closed: Promise<{ code: number; reason: string }> }> {
  const counted = new Promise<Counted>((resolve) => (opened = resolve));
  const ws = new WebSocket(`ws://127.0.0.1:${server.port}`);
  ws.binaryType = "arraybuffer";
  const received: (string | number[])[] = [];
  ws.onmessage = (e) => received.push(typeof e.data === "string" ? e.data : [...new Uint8Array(e.data)]);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })));
  await new Promise((resolve) => (ws.onopen = resolve));
  return { counted: await counted, received, closed };
}

const frameOf = (i: number): string | Uint8Array => (i % 2 ? `{"n":${i}}` : new Uint8Array([i, 0, 255]));
const seen = (i: number): string | number[] => (i % 2 ? `{"n":${i}}` : [i, 0, 255]);

test("a burst sent in one turn, from outside the socket's callbacks: the first frame at once, the rest in one corked write, every frame its own message in order, all before the close", async () => {
  const { counted, received, closed } = await connect();
  setTimeout(() => {
    for (let i = 0; i < 50; i++) counted.sender.send(frameOf(i));
    counted.sender.close(1000, "done");
  }, 0);
  expect(await closed).toEqual({ code: 1000, reason: "done" });
  expect(received).toEqual(Array.from({ length: 50 }, (_, i) => seen(i)));
  expect(counted.writes).toEqual({ alone: 1, corked: 1 });
});

test("one frame a turn (a real-time stream) goes at once: nothing waits for a cork", async () => {
  const { counted, received, closed } = await connect();
  for (let i = 0; i < 5; i++) {
    await Bun.sleep(1);
    counted.sender.send(frameOf(i));
  }
  await Bun.sleep(1);
  counted.sender.close(1000, "done");
  await closed;
  expect(received).toEqual(Array.from({ length: 5 }, (_, i) => seen(i)));
  expect(counted.writes).toEqual({ alone: 5, corked: 0 });
});

test("frames after the client has gone are dropped, and a close then does nothing", async () => {
  const { counted, closed } = await connect();
  counted.sender.close(1000, "bye");
  await closed;
  expect(() => {
    counted.sender.send("late");
    counted.sender.send("later");
    counted.sender.close(1000, "again");
  }).not.toThrow();
  await Bun.sleep(1);
  expect(counted.writes).toEqual({ alone: 0, corked: 0 });
});
