import { describe, expect, test } from "bun:test";
import { KEPT_AUDIO_SECONDS, KeptAudio } from "../src/sessions/stt-kept-audio.ts";

// What a streaming STT session keeps for the next provider (src/sessions/stt-kept-audio.ts): the
// audio since the provider settled it, the commands it has not answered, bounded in seconds.

const RATE = 32_000; // 16 kHz PCM: 2 bytes a sample frame
/** A frame of `ms` whose bytes count up from `from` (so a replay shows where it starts). */
const frame = (ms: number, from = 0) => Uint8Array.from({ length: (RATE * ms) / 1000 }, (_, i) => (from + i) % 251);
const bytesOf = (items: ReturnType<KeptAudio["replay"]>) => items.reduce((n, item) => n + (item instanceof Uint8Array ? item.byteLength : 0), 0);

describe("kept audio", () => {
  test("a final settles the audio before its end, on a sample frame; commands keep their place ahead of what is left", () => {
    const kept = new KeptAudio(RATE, 2);
    kept.audio(frame(500));
    kept.command({ type: "commit" });
    kept.audio(frame(500, 16_000 % 251));
    kept.settled(700.03); // 22400.96 bytes: back to the sample frame at 22400
    expect(kept.startMs).toBe(700);
    const replay = kept.replay();
    expect(replay[0]).toEqual({ type: "commit" });
    expect(bytesOf(replay)).toBe(32_000 - 22_400);
    expect((replay[1] as Uint8Array)[0]).toBe(22_400 % 251);
  });

  test("answers drop the oldest commit or clear, never the close", () => {
    const kept = new KeptAudio(RATE, 2);
    kept.command({ type: "clear" });
    kept.audio(frame(100));
    kept.command({ type: "commit" });
    kept.command({ type: "close" });
    kept.answered();
    expect(kept.replay().filter((item) => !(item instanceof Uint8Array))).toEqual([{ type: "commit" }, { type: "close" }]);
    kept.answered();
    kept.answered();
    expect(kept.replay().filter((item) => !(item instanceof Uint8Array))).toEqual([{ type: "close" }]);
  });

  test(`past ${KEPT_AUDIO_SECONDS} s the oldest audio is let go, and counted`, () => {
    const kept = new KeptAudio(RATE, 2);
    for (let i = 0; i < KEPT_AUDIO_SECONDS + 2; i++) kept.audio(frame(1000));
    expect(kept.bytes).toBe(KEPT_AUDIO_SECONDS * RATE);
    expect(kept.droppedBytes).toBe(2 * RATE);
    expect(kept.startMs).toBe(2000);
    expect(bytesOf(kept.replay())).toBe(KEPT_AUDIO_SECONDS * RATE);
  });

  test("what the replay is given is a copy: a stream that takes over a buffer leaves the kept audio whole", () => {
    const kept = new KeptAudio(RATE, 2);
    const sent = frame(100, 7);
    kept.audio(sent);
    sent.fill(0);
    const first = kept.replay()[0] as Uint8Array;
    expect(first[0]).toBe(7);
    first.fill(0);
    expect((kept.replay()[0] as Uint8Array)[0]).toBe(7);
  });
});
