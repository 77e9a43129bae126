import { describe, expect, test } from "bun:test";
import { AsyncQueue } from "../src/util/async-queue.ts";

async function drain<T>(queue: AsyncQueue<T>): Promise<{ items: T[]; error?: unknown }> {
  const items: T[] = [];
  try {
    for await (const item of queue) items.push(item);
    return { items };
  } catch (error) {
    return { items, error };
  }
}

describe("AsyncQueue", () => {
  test("items pushed before the read and while it waits come in order, then the end", async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    queue.push(2);
    const read = drain(queue);
    await Bun.sleep(0);
    queue.push(3);
    await Bun.sleep(0);
    queue.push(4);
    queue.push(5);
    queue.end();
    queue.push(6); // after the end: dropped
    expect(await read).toEqual({ items: [1, 2, 3, 4, 5] });
  });

  test("a failure ends the reading after the items pushed before it, with its error", async () => {
    const queue = new AsyncQueue<string>();
    const read = drain(queue);
    await Bun.sleep(0);
    queue.push("a");
    queue.push("b");
    queue.fail(new Error("upstream gone"));
    const { items, error } = await read;
    expect(items).toEqual(["a", "b"]);
    expect((error as Error).message).toBe("upstream gone");
  });

  test("a failure while the reader waits on an empty queue rejects its read at once", async () => {
    const queue = new AsyncQueue<string>();
    const read = drain(queue);
    await Bun.sleep(0);
    queue.fail(new Error("stopped"));
    expect(await read).toEqual({ items: [], error: new Error("stopped") });
  });

  test("a push past the cap fails the queue; the item that overflowed is still read before the error, waiting reader or not", async () => {
    for (const waiting of [false, true]) {
      const queue = new AsyncQueue<Uint8Array>({ size: (b) => b.byteLength, cap: 10, overflow: () => new Error("backlog over 10 bytes") });
      const read = waiting ? drain(queue) : undefined;
      await Bun.sleep(0);
      queue.push(new Uint8Array(4));
      queue.push(new Uint8Array(20));
      queue.push(new Uint8Array(1)); // after the failure: dropped
      const { items, error } = await (read ?? drain(queue));
      expect(items.map((b) => b.byteLength)).toEqual([4, 20]);
      expect((error as Error).message).toBe("backlog over 10 bytes");
    }
  });

  test("roomFor holds the producer while the unread weight is at the mark, and lets it go as items are read", async () => {
    const queue = new AsyncQueue<Uint8Array>({ size: (b) => b.byteLength, cap: 1_000, overflow: () => new Error("over") });
    queue.push(new Uint8Array(60));
    queue.push(new Uint8Array(60));
    expect(queue.unread).toBe(120);
    const room = queue.roomFor(100);
    expect(room).toBeInstanceOf(Promise);
    let free = false;
    void room!.then(() => (free = true));
    const it = queue[Symbol.asyncIterator]();
    await it.next();
    await Bun.sleep(0);
    expect(queue.unread).toBe(60);
    expect(free).toBe(true);
    expect(queue.roomFor(100)).toBeUndefined();
  });

  test("an item handed to a reader that was waiting no longer counts as unread", async () => {
    const queue = new AsyncQueue<Uint8Array>({ size: (b) => b.byteLength, cap: 1_000, overflow: () => new Error("over") });
    const it = queue[Symbol.asyncIterator]();
    const next = it.next();
    queue.push(new Uint8Array(300));
    expect(queue.unread).toBe(0);
    expect(queue.roomFor(100)).toBeUndefined();
    expect(((await next).value as Uint8Array).byteLength).toBe(300);
  });
});

describe("AsyncQueue offers", () => {
  test("an item pushed while the reader waits is offered first: taken, it is not read; refused, it is, in order; items pushed while the reader is busy are not offered", async () => {
    const queue = new AsyncQueue<number>();
    const offered: number[] = [];
    queue.offer = (n) => {
      offered.push(n);
      return n % 2 === 0;
    };
    queue.push(0); // no reader yet: queued, not offered
    const it = queue[Symbol.asyncIterator]();
    expect((await it.next()).value).toBe(0);
    const read = it.next(); // waits
    queue.push(2); // taken
    queue.push(4); // taken
    queue.push(5); // refused: read
    queue.push(6); // the reader has its item and is not waiting: queued
    expect((await read).value).toBe(5);
    expect((await it.next()).value).toBe(6);
    expect(offered).toEqual([2, 4, 5]);
    queue.offer = undefined;
    const last = it.next();
    queue.push(8);
    expect((await last).value).toBe(8);
    expect(offered).toEqual([2, 4, 5]);
  });

  test("what an offer throws fails the queue: the waiting read rejects with it", async () => {
    const queue = new AsyncQueue<string>();
    queue.offer = () => {
      throw new Error("consumer broke");
    };
    const read = drain(queue);
    await Bun.sleep(0);
    queue.push("a");
    queue.push("b"); // after the failure: dropped
    expect(await read).toEqual({ items: [], error: new Error("consumer broke") });
  });
});
