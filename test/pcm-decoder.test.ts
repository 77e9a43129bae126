import { describe, expect, test } from "bun:test";
import { PcmDecoder } from "../src/audio/decode.ts";
import { probeDuration } from "../src/audio/probe.ts";
import { wavHeader } from "../src/audio/wav.ts";
import { speak, wavFile } from "./helpers/speech.ts";

// A recording already at the rate asked for is handed on sample for sample: the decoder takes
// 16-bit samples to [-1, 1) and back on the same scale, so nothing is nudged by a step of rounding.

async function decodeAll(file: Uint8Array, rate: number): Promise<Int16Array> {
  const decoder = await PcmDecoder.open(file, probeDuration(file).container, rate);
  const out = decoder.read(Number.MAX_SAFE_INTEGER);
  decoder.free();
  return out;
}

describe("PcmDecoder", () => {
  test("a mono WAV at the asked rate comes out identical, the extremes included", async () => {
    const extremes = Int16Array.from([-32768, -32767, -20000, -1, 0, 1, 20000, 32766, 32767]);
    const pcm = new Int16Array(extremes.length + 16000);
    pcm.set(extremes);
    pcm.set(speak("Thank you very much.").subarray(0, 16000), extremes.length);
    const out = await decodeAll(wavFile(pcm, 16000), 16000);
    expect(out.length).toBe(pcm.length);
    expect(Array.from(out.subarray(0, extremes.length))).toEqual(Array.from(extremes));
    expect(Buffer.from(out.buffer, out.byteOffset, out.byteLength).equals(Buffer.from(pcm.buffer))).toBe(true);
  });

  test("a stereo WAV whose channels are the same comes out as that channel", async () => {
    const mono = Int16Array.from({ length: 8000 }, (_, i) => Math.round(Math.sin(i / 7) * 30000));
    const stereo = new Int16Array(mono.length * 2);
    for (let i = 0; i < mono.length; i++) stereo[2 * i] = stereo[2 * i + 1] = mono[i]!;
    const file = new Uint8Array(44 + stereo.byteLength);
    file.set(wavHeader(8000, 2, stereo.byteLength));
    file.set(new Uint8Array(stereo.buffer), 44);
    const out = await decodeAll(file, 8000);
    expect(Array.from(out)).toEqual(Array.from(mono));
  });
});
