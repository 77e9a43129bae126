import { describe, expect, test } from "bun:test";
import { AHEAD_MS, feedPaced, type PcmPieces } from "../src/providers/paced-audio.ts";

// A recording fed at its recognizer's pace (src/providers/paced-audio.ts), and fed on at another's
// when another provider takes it over mid-way (`repace`).

const RATE = 32_000;
/** `seconds` of audio in pieces of 100 ms. */
function pieces(seconds: number): PcmPieces {
  const all = Array.from({ length: seconds * 10 }, () => new Uint8Array(RATE / 10));
  return {
    [Symbol.asyncIterator]: async function* () {
      yield* all;
    },
    close: () => {},
  };
}

describe("feedPaced", () => {
  test("at the `heard` pace a feed that hears nothing stops AHEAD_MS in; taken over by a provider that takes all, it goes on to the end", async () => {
    let sent = 0;
    let ended = false;
    let stalled!: () => void;
    const atMark = new Promise<void>((resolve) => (stalled = resolve));
    const feed = feedPaced(pieces(20), RATE, "heard", {
      send: (piece) => {
        sent += piece.byteLength;
        if (sent >= ((AHEAD_MS + 100) * RATE) / 1000) stalled();
      },
      unsent: () => 0,
      end: () => (ended = true),
      failed: (err) => {
        throw err;
      },
    });
    await atMark;
    await Bun.sleep(50); // time for the feed to go on, if it would
    expect(sent).toBe(((AHEAD_MS + 100) * RATE) / 1000); // up to the piece that starts at AHEAD_MS
    expect(ended).toBe(false);
    feed.repace("all");
    for (let i = 0; i < 200 && !ended; i++) await Bun.sleep(5);
    expect(ended).toBe(true);
    expect(sent).toBe(20 * RATE);
  });
});
