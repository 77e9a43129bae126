import { describe, expect, test } from "bun:test";
import { audioBytesPerSecond, audioSeconds, billedSeconds, characters } from "../src/ledger/usage.ts";

// The one place that decides billed units: seconds of audio (every second begun) and characters
// (code points).

describe("usage as billed", () => {
  test("a streamed format's bytes per second: 16-bit PCM, 8-bit µ-law, per channel", () => {
    expect(audioBytesPerSecond("pcm_16000", 1)).toBe(32000);
    expect(audioBytesPerSecond("pcm_48000", 2)).toBe(192000);
    expect(audioBytesPerSecond("ulaw_8000", 1)).toBe(8000);
    expect(audioBytesPerSecond("ulaw_8000", 2)).toBe(16000);
  });

  test("audio is billed by the second, every second begun counting whole", () => {
    const rate = audioBytesPerSecond("pcm_16000", 1);
    expect(audioSeconds(0, rate)).toBe(0);
    expect(audioSeconds(1, rate)).toBe(1);
    expect(audioSeconds(32000, rate)).toBe(1);
    expect(audioSeconds(32001, rate)).toBe(2);
    expect(audioSeconds(10 * 60 * 32000, rate)).toBe(600);
    expect(billedSeconds(0)).toBe(0);
    expect(billedSeconds(2)).toBe(2);
    expect(billedSeconds(2.001)).toBe(3);
    expect(billedSeconds(3719 / 1000)).toBe(4);
  });

  test("characters are code points, not UTF-16 units", () => {
    expect(characters("")).toBe(0);
    expect(characters("héllo")).toBe(5);
    expect(characters("𝄞 clef")).toBe(6); // "𝄞".length is 2
    expect(characters("👋🏽")).toBe(2); // a wave and its skin tone: two code points, four UTF-16 units
    expect(characters("日本語")).toBe(3);
  });
});
