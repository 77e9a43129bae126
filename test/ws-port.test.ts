import { describe, expect, test } from "bun:test";
import type { ServerWebSocket } from "bun";
import { WsPort } from "../src/surfaces/ws-port.ts";

/** A socket double whose `send` answers from a script: bytes, -1 (queued) or 0 (dropped). */
function socket(answers: number[]) {
  const sent: Uint8Array[] = [];
  const raw = {
    readyState: 1,
    send(data: Uint8Array) {
      const answer = answers.shift() ?? data.byteLength;
      if (answer !== 0) sent.push(data);
      return answer;
    },
    close() {
      raw.readyState = 3;
    },
  };
  return { raw: raw as unknown as ServerWebSocket<unknown>, sent, state: raw };
}

const chunk = (n: number) => new Uint8Array([n]);

describe("WsPort backpressure", () => {
  test("a send that goes out returns no promise: no waiting on the fast path", () => {
    const { raw, sent } = socket([]);
    expect(new WsPort(raw).sendAudio(chunk(1))).toBeUndefined();
    expect(sent).toEqual([chunk(1)]);
  });

  test("-1 (queued by Bun): the next audio waits for drain, the frame is not sent twice", async () => {
    const { raw, sent } = socket([-1]);
    const port = new WsPort(raw);
    let released = false;
    const wait = port.sendAudio(chunk(1))!.then(() => (released = true));
    await Bun.sleep(10);
    expect(released).toBe(false);
    port.drain();
    await wait;
    expect(sent).toEqual([chunk(1)]);
  });

  test("0 (dropped by Bun): the frame is sent again after drain, nothing is lost", async () => {
    const { raw, sent } = socket([0]);
    const port = new WsPort(raw);
    const wait = port.sendAudio(chunk(7))!;
    expect(sent).toEqual([]);
    port.drain();
    await wait;
    expect(sent).toEqual([chunk(7)]);
  });

  test("closing releases a waiting sender", async () => {
    const { raw, state } = socket([-1]);
    const port = new WsPort(raw);
    let released = false;
    const wait = port.sendAudio(chunk(1))!.then(() => (released = true));
    await Bun.sleep(10);
    expect(released).toBe(false);
    port.close(1000, "done");
    await Bun.sleep(0); // the close settles it at once: before the next turn of the event loop, with no drain
    expect(released).toBe(true);
    expect(state.readyState).toBe(3);
    await wait;
  });
});
