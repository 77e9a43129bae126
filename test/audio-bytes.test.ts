import { describe, expect, test } from "bun:test";
import { exactBuffer, samplesOf } from "../src/audio/bytes.ts";
import { Mp3StreamEncoder } from "../src/audio/mp3.ts";
import { pcmOfWav, wavHeader } from "../src/audio/wav.ts";

// Buffer views hand out their whole allocation through `.buffer` (and `Buffer#slice` is a view too):
// what crosses a worker boundary or is read as samples must be exactly the view's bytes.

const wav = () => Buffer.concat([wavHeader(16000, 1, 6), Buffer.from([1, 0, 2, 0, 3, 0])]);

describe("exactBuffer and samplesOf", () => {
  test("the PCM of a WAV read into a Buffer: only its samples, never the header", () => {
    const pcm = pcmOfWav(wav());
    expect(pcm.buffer.byteLength).toBe(50); // the view's buffer is the whole file
    expect([...new Uint8Array(exactBuffer(pcm))]).toEqual([1, 0, 2, 0, 3, 0]);
    expect([...samplesOf(pcm)]).toEqual([1, 2, 3]);
  });

  test("a view at an odd offset is copied into whole samples; a trailing odd byte is left out", () => {
    const bytes = Buffer.from([9, 1, 0, 2, 0, 3]).subarray(1);
    expect([...samplesOf(bytes)]).toEqual([1, 2]);
  });

  test("a view spanning its whole ArrayBuffer is handed over as is (transferred, not copied)", () => {
    const own = new Uint8Array([1, 2, 3, 4]);
    expect(exactBuffer(own)).toBe(own.buffer);
  });

  test("the MP3 encoder takes PCM in a Buffer view at an odd offset", () => {
    const pcm = Buffer.alloc(4801);
    const encoder = new Mp3StreamEncoder(16000);
    expect(() => encoder.encode(pcm.subarray(1))).not.toThrow();
  });
});
