import { describe, expect, test } from "bun:test";
import { AacStreamEncoder } from "../src/audio/aac.ts";
import { ffprobe } from "./helpers/ffprobe.ts";

// The streaming AAC encoder on its own, read back by ffprobe/ffmpeg: ADTS that an independent
// decoder takes, the same bytes however the PCM was cut into chunks.

const RATE = 24000;
/** One second of a 440 Hz tone at 24 kHz, 16-bit mono. */
const TONE = (() => {
  const samples = new Int16Array(RATE);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE));
  return new Uint8Array(samples.buffer);
})();

/** The tone encoded from pieces of `size` bytes. */
function encode(size: number): Uint8Array {
  const encoder = new AacStreamEncoder(RATE, 64);
  const out: Uint8Array[] = [];
  for (let at = 0; at < TONE.byteLength; at += size) out.push(encoder.encode(TONE.subarray(at, at + size)));
  out.push(encoder.flush());
  encoder.release();
  return Buffer.concat(out);
}

describe("AacStreamEncoder", () => {
  test("ADTS AAC at the asked rate, of the input's length plus the encoder's priming and padding", async () => {
    const probed = await ffprobe(encode(TONE.byteLength), "aac");
    expect(probed).toMatchObject({ codec: "aac", sampleRate: RATE, channels: 1 });
    expect(probed.seconds).toBeGreaterThanOrEqual(1);
    expect(probed.seconds).toBeLessThanOrEqual(1 + (2 * 1024) / RATE);
    expect(probed.bytes / probed.seconds / 125).toBeGreaterThan(64 * 0.6); // kb/s, around the asked 64
    expect(probed.bytes / probed.seconds / 125).toBeLessThan(64 * 1.4);
  });

  test("chunks cut anywhere, mid-sample included, give the same stream", () => {
    expect(encode(1299)).toEqual(encode(TONE.byteLength)); // an odd size splits samples
  });

  test("a released encoder flushes nothing", () => {
    const encoder = new AacStreamEncoder(RATE, 64);
    encoder.encode(TONE);
    encoder.release();
    expect(encoder.flush().byteLength).toBe(0);
  });
});
