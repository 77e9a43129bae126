import { describe, expect, test } from "bun:test";
import type { Binding } from "../src/catalogue/types.ts";
import type { SttCommand } from "../src/sessions/stt-events.ts";
import { SttFailover } from "../src/sessions/stt-failover.ts";
import { KEPT_AUDIO_SECONDS, KeptAudio } from "../src/sessions/stt-kept-audio.ts";

// The kept audio's ring (src/sessions/stt-kept-audio.ts): whatever the ring did (wrapped, grew,
// let go past its bound, cut a frame where a final settled it), a replay gives the frames as they
// came and the commands where they came. Every byte at the caller's offset `o` is `o % 251`, so a
// replayed frame shows exactly which audio it holds.

const RATE = 32_000; // 16 kHz PCM: 2 bytes a sample frame
const FRAME = 640; // 20 ms
type Item = Uint8Array | SttCommand;

/** The caller's audio from byte `from`, `n` bytes of it. */
const audioAt = (from: number, n: number) => Uint8Array.from({ length: n }, (_, i) => (from + i) % 251);

/** A caller: sends frames in order, tracking its byte offset. */
function caller(kept: { audio(f: Uint8Array): void }) {
  let at = 0;
  return {
    send(n: number) {
      kept.audio(audioAt(at, n));
      at += n;
    },
    sendFrames(count: number, size = FRAME) {
      for (let i = 0; i < count; i++) this.send(size);
    },
  };
}

/** A replay as (from, length) of each audio item, and the commands by type, in order. */
function shape(items: Item[]): string[] {
  return items.map((item) => {
    if (!(item instanceof Uint8Array)) return item.type;
    return `${item[0]}+${item.byteLength}`;
  });
}

/** Every audio item holds the caller's bytes from where the one before it ended (from `start`). */
function expectContiguous(items: Item[], start: number): number {
  let at = start;
  for (const item of items) {
    if (!(item instanceof Uint8Array)) continue;
    expect(item).toEqual(audioAt(at, item.byteLength));
    at += item.byteLength;
  }
  return at;
}

describe("kept audio in a ring", () => {
  test("wrapping around the ring's end, a frame across it: the frames replayed whole and as they came", () => {
    const kept = new KeptAudio(RATE, 2);
    const c = caller(kept);
    const frame = 960; // 30 ms: a 2 s ring's end falls inside one
    c.sendFrames(50, frame); // 1.5 s
    kept.settled(1000); // the ring's start moves 1 s in, inside the 34th frame
    c.sendFrames(50, frame); // 1.5 s more: 2 s kept, past the end of a 2 s ring's first turn
    const items = kept.replay();
    expect(items.map((item) => (item as Uint8Array).byteLength)).toEqual([34 * frame - RATE, ...Array<number>(16 + 50).fill(frame)]);
    expect(expectContiguous(items, RATE)).toBe(3 * RATE);
  });

  test("commands between frames keep their place, also across the wrap", () => {
    const kept = new KeptAudio(RATE, 2);
    const c = caller(kept);
    c.sendFrames(90);
    kept.settled(1500);
    c.sendFrames(2);
    kept.command({ type: "commit" });
    c.sendFrames(60); // wraps
    kept.command({ type: "clear" });
    kept.command({ type: "commit" });
    c.sendFrames(1);
    const items = kept.replay();
    const s = shape(items);
    expect(s.indexOf("commit")).toBe(15 + 2);
    expect(s.slice(15 + 2 + 1 + 60, 15 + 2 + 1 + 60 + 3)).toEqual(["clear", "commit", `${(152 * FRAME) % 251}+${FRAME}`]);
    expect(expectContiguous(items, 1.5 * RATE)).toBe(153 * FRAME);
  });

  test("a final settling in the middle of a frame: the replay starts there, on a sample frame, the rest of the frames whole", () => {
    const kept = new KeptAudio(RATE, 2);
    const c = caller(kept);
    c.sendFrames(5);
    kept.command({ type: "commit" });
    c.sendFrames(5);
    kept.settled(130.03); // byte 4160.96 → 4160, in the 7th frame (3840–4480)
    expect(kept.startMs).toBe(130);
    const items = kept.replay();
    expect(shape(items)).toEqual(["commit", `${4160 % 251}+320`, ...[7, 8, 9].map((k) => `${(k * FRAME) % 251}+${FRAME}`)]);
    expect(expectContiguous(items, 4160)).toBe(10 * FRAME);
    expect(kept.bytes).toBe(10 * FRAME - 4160);
  });

  test(`past ${KEPT_AUDIO_SECONDS} s after the ring wrapped: the oldest let go, counted, the rest replayed in order`, () => {
    const kept = new KeptAudio(RATE, 2);
    const c = caller(kept);
    c.sendFrames(100);
    kept.settled(1980); // all but the last frame settled: the ring's start is near its end
    c.sendFrames(50 * (KEPT_AUDIO_SECONDS + 1)); // 31 s more
    kept.command({ type: "close" });
    expect(kept.bytes).toBe(KEPT_AUDIO_SECONDS * RATE);
    expect(kept.droppedBytes).toBe(RATE + FRAME);
    const start = 2 * RATE + (KEPT_AUDIO_SECONDS + 1) * RATE - KEPT_AUDIO_SECONDS * RATE;
    expect(kept.startMs).toBe((start / RATE) * 1000);
    const items = kept.replay();
    expect(items).toHaveLength(50 * KEPT_AUDIO_SECONDS + 1);
    expect(items.at(-1)).toEqual({ type: "close" });
    expect(expectContiguous(items, start)).toBe(start + KEPT_AUDIO_SECONDS * RATE);
    // and it goes on: settling part of it and sending more wraps again
    kept.settled(((start + 10 * RATE) / RATE) * 1000);
    c.sendFrames(250);
    const after = kept.replay();
    expect(after.at(-251)).toEqual({ type: "close" });
    expect(expectContiguous(after, start + 10 * RATE)).toBe(start + (KEPT_AUDIO_SECONDS + 5) * RATE);
  });

  test("a frame longer than the bound: its end is kept, the commands before it go first", () => {
    const kept = new KeptAudio(RATE, 2);
    const c = caller(kept);
    c.sendFrames(10);
    kept.command({ type: "commit" });
    c.send((KEPT_AUDIO_SECONDS + 1) * RATE);
    expect(kept.bytes).toBe(KEPT_AUDIO_SECONDS * RATE);
    expect(kept.droppedBytes).toBe(10 * FRAME + RATE);
    const items = kept.replay();
    expect(shape(items)[0]).toBe("commit");
    expect(items).toHaveLength(2);
    expect(expectContiguous(items, 10 * FRAME + RATE)).toBe(10 * FRAME + (KEPT_AUDIO_SECONDS + 1) * RATE);
  });

  test("the ring's copies are the replay's own: sending more after a replay leaves it whole", () => {
    const kept = new KeptAudio(RATE, 2);
    const c = caller(kept);
    c.sendFrames(60);
    kept.settled(1000);
    const items = kept.replay();
    c.sendFrames(100); // overwrites the ring where the replayed audio was
    expect(expectContiguous(items, RATE)).toBe(60 * FRAME);
  });
});

describe("nothing is kept when no provider could take over", () => {
  const binding = (id: string) => ({ id: "m", canonical: `${id}/m`, provider: { id } }) as unknown as Binding;
  const a = binding("a");
  const b = binding("b");
  /** What a resumed provider is given. */
  const target = (given: Item[]) => ({ send: (item: Item) => void given.push(item), unsent: () => 0 });

  test("served by the only candidate: the audio waiting for it is given, then nothing is kept", () => {
    const failover = new SttFailover(RATE, 2);
    failover.keep(audioAt(0, FRAME));
    const given: Item[] = [];
    failover.resume(a, [a], target(given), false);
    expect(given).toEqual([audioAt(0, FRAME)]);
    expect(failover.keptBytes).toBe(0);
    failover.keep(audioAt(FRAME, FRAME));
    failover.keep({ type: "commit" });
    expect(failover.keptBytes).toBe(0);
  });

  test("with a candidate after it, the audio is kept until settled, and the next is given it", () => {
    const failover = new SttFailover(RATE, 2);
    failover.resume(a, [a, b], target([]), false);
    for (let i = 0; i < 3; i++) failover.keep(audioAt(i * FRAME, FRAME));
    failover.heard({ type: "transcript", final: true, text: "x", startMs: 0, endMs: 20 });
    expect(failover.keptBytes).toBe(2 * FRAME);
    const given: Item[] = [];
    failover.resume(b, [a, b], target(given), false);
    expect(given).toEqual([audioAt(FRAME, FRAME), audioAt(2 * FRAME, FRAME)]);
    expect(failover.keptBytes).toBe(0); // b is the last
  });
});
