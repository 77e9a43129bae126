import { expect, test } from "bun:test";
import { ChunkOrder, WINDOW } from "../src/surfaces/telephony/chunk-order.ts";

// Caller frames taken in their chunk order: held while a gap may still fill, given up once the window is full.

const taking = () => {
  const taken: number[] = [];
  const order = new ChunkOrder((payload) => taken.push(payload[0]!));
  return { taken, take: (chunk: number | undefined, tag = chunk ?? 0) => order.take(new Uint8Array([tag]), chunk) };
};

test("swapped frames are put back in order; the first frame late is waited for", () => {
  const { taken, take } = taking();
  for (const chunk of [2, 1, 4, 3, 5, 7, 6]) take(chunk);
  expect(taken).toEqual([1, 2, 3, 4, 5, 6, 7]);
});

test("a frame that never comes holds the others only until the window is full; when it comes late it is dropped", () => {
  const { taken, take } = taking();
  take(1);
  for (let chunk = 3; chunk < 3 + WINDOW - 1; chunk++) take(chunk);
  expect(taken).toEqual([1]);
  take(3 + WINDOW - 1);
  expect(taken).toEqual([1, ...Array.from({ length: WINDOW }, (_, i) => 3 + i)]);
  take(2);
  take(3 + WINDOW);
  expect(taken).toEqual([1, ...Array.from({ length: WINDOW + 1 }, (_, i) => 3 + i)]);
});

test("frames without a chunk number pass as they come", () => {
  const { taken, take } = taking();
  take(undefined, 9);
  take(undefined, 8);
  expect(taken).toEqual([9, 8]);
});
