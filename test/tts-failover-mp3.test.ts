import { expect, test } from "bun:test";
import { TtsFailover } from "../src/sessions/tts-failover.ts";

// A provider's own MP3 on a TTS session: held to whole frames only where another candidate may
// have to continue the stream (a frame cut off by a failing provider must never go out); with no
// candidate after it, the provider's chunks pass as they come, neither copied nor held back.

const mp3 = await Bun.file(new URL("./fixtures/speech.mp3", import.meta.url)).bytes();
const MP3 = { encoding: "mp3", sampleRate: 44100, channels: 1 } as const;
const cut = 1001; // inside a frame

test("with no next candidate, each chunk passes through as it came", () => {
  const failover = new TtsFailover();
  failover.began(MP3, false);
  const first = mp3.subarray(0, cut);
  const second = mp3.subarray(cut);
  expect(failover.audio(first)).toBe(first);
  expect(failover.audio(second)).toBe(second);
  expect(failover.rest().byteLength).toBe(0);
});

test("with a next candidate, a frame's start waits for its end, and the stream comes out whole", () => {
  const failover = new TtsFailover();
  failover.began(MP3, true);
  const out = [failover.audio(mp3.subarray(0, cut)), failover.audio(mp3.subarray(cut)), failover.rest()] as Uint8Array[];
  expect(out[0].byteLength).toBeLessThan(cut);
  expect(Buffer.concat(out).equals(Buffer.from(mp3))).toBe(true);
});
