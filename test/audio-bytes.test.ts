import { describe, expect, test } from "bun:test";
import { exactBuffer, samplesOf } from "../src/audio/bytes.ts";
import { Mp3StreamEncoder } from "../src/audio/mp3.ts";
import { pcmOfWav, wavHeader } from "../src/audio/wav.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { peak } from "./helpers/ws-client.ts";

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

  test("the MP3 encoder takes PCM in a Buffer view at an odd offset: it encodes the view's samples", async () => {
    const tone = new Int16Array(16000).map((_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16000))); // 1 s of 440 Hz
    const held = Buffer.alloc(1 + tone.byteLength);
    held.set(new Uint8Array(tone.buffer), 1);
    const encode = (pcm: Uint8Array) => {
      const encoder = new Mp3StreamEncoder(16000);
      return Buffer.concat([encoder.encode(pcm), encoder.flush()]);
    };
    const mp3 = encode(held.subarray(1));
    expect(mp3.equals(encode(new Uint8Array(tone.buffer)))).toBe(true); // as from the samples in a buffer of their own
    const probed = await ffprobe(mp3, "mp3");
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 16000, channels: 1 });
    expect(Math.abs(probed.seconds - 1)).toBeLessThan(0.1); // LAME pads a frame or two
    const decoded = Bun.spawnSync(["ffmpeg", "-v", "error", "-f", "mp3", "-i", "pipe:0", "-f", "s16le", "-ac", "1", "-ar", "16000", "pipe:1"], { stdin: mp3 });
    expect(decoded.exitCode).toBe(0);
    expect(peak([decoded.stdout])).toBeGreaterThan(6000); // the tone, not silence
  });
});
