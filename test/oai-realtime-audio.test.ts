import { describe, expect, test } from "bun:test";
import { CallerAudio, type InputFormat } from "../src/surfaces/oai/realtime-audio.ts";
import { concat, silence, speak } from "./helpers/speech.ts";

// The caller's audio on /oai/realtime checked against ffmpeg, a codec that is not ours: G.711 is
// decoded sample for sample as ffmpeg decodes it, and resampling keeps the duration.

function ffmpeg(args: string[], input: Uint8Array): Uint8Array {
  const out = Bun.spawnSync(["ffmpeg", "-loglevel", "error", ...args], { stdin: input });
  expect(out.exitCode).toBe(0);
  return out.stdout;
}

async function through(format: InputFormat, rate: number, bytes: Uint8Array, chunk: number): Promise<Uint8Array> {
  const out: Uint8Array[] = [];
  const audio = new CallerAudio(format, rate, (pcm) => out.push(pcm.slice()));
  for (let at = 0; at < bytes.byteLength; at += chunk) audio.write(bytes.subarray(at, at + chunk));
  for (let i = 0; i < 100 && out.reduce((n, c) => n + c.byteLength, 0) < (bytes.byteLength * rate) / (format.type === "audio/pcm" ? 24000 : 4000) - 64; i++) await Bun.sleep(5);
  audio.release();
  return Buffer.concat(out);
}

const pcm16k = Buffer.from(concat([silence(200), speak("Thank you very much for your help."), silence(200)]).buffer);

describe("/oai/realtime input audio", () => {
  for (const [type, codec] of [
    ["audio/pcmu", "mulaw"],
    ["audio/pcma", "alaw"],
  ] as const) {
    test(`${type} is decoded as ffmpeg decodes ${codec}, in chunks of any size`, async () => {
      const g711 = ffmpeg(["-f", "s16le", "-ar", "16000", "-ac", "1", "-i", "pipe:0", "-ar", "8000", "-f", codec, "pipe:1"], pcm16k);
      const expected = ffmpeg(["-f", codec, "-ar", "8000", "-ac", "1", "-i", "pipe:0", "-f", "s16le", "pipe:1"], g711);
      expect(Buffer.from(await through({ type }, 8000, g711, 333)).equals(Buffer.from(expected))).toBe(true);
    });
  }

  test("24 kHz PCM reaches a 16 kHz recognizer with its duration, and µ-law a 16 kHz one with twice its samples", async () => {
    const pcm24k = ffmpeg(["-f", "s16le", "-ar", "16000", "-ac", "1", "-i", "pipe:0", "-ar", "24000", "-f", "s16le", "pipe:1"], pcm16k);
    const at16k = await through({ type: "audio/pcm", rate: 24000 }, 16000, pcm24k, 4801);
    expect(Math.abs(at16k.byteLength - pcm16k.byteLength)).toBeLessThanOrEqual(64);
    const mu = ffmpeg(["-f", "s16le", "-ar", "16000", "-ac", "1", "-i", "pipe:0", "-ar", "8000", "-f", "mulaw", "pipe:1"], pcm16k);
    const fromMu = await through({ type: "audio/pcmu" }, 16000, mu, 800);
    expect(Math.abs(fromMu.byteLength - mu.byteLength * 4)).toBeLessThanOrEqual(64);
  });
});
