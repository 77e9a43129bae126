import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElevenLabsClient } from "@elevenlabs/elevenlabs-js";
import { FixedPcmProvider, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// /el output formats transcoded from the engine's PCM, asked through the official SDK and read
// back with ffprobe/ffmpeg: the asked rate and bitrate, and the speech's length.

let server: TestServer;
let client: ElevenLabsClient;
beforeAll(async () => {
  server = await startTestServer({}, { extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed", 5)] } });
  client = new ElevenLabsClient({ apiKey: server.key, baseUrl: `${server.url}/el`, maxRetries: 0 });
});
afterAll(() => server.stop(0));

const text = "The router encodes this sentence in the format the caller asked for.";
type Format = Parameters<ElevenLabsClient["textToSpeech"]["convert"]>[1]["outputFormat"];
const speak = async (outputFormat: Format) => new Uint8Array(await new Response(await client.textToSpeech.convert("slt", { text, modelId: "flite", outputFormat })).arrayBuffer());
/** Flite's speech of `text` in seconds, from its PCM. */
let pcmSeconds: number;

describe("/el output formats transcoded from PCM", () => {
  beforeAll(async () => {
    pcmSeconds = (await speak("pcm_16000")).byteLength / 2 / 16000;
    expect(pcmSeconds).toBeGreaterThan(2);
  });

  for (const [format, rate, kbps] of [
    ["mp3_22050_32", 22050, 32],
    ["mp3_44100_64", 44100, 64],
    ["mp3_24000_48", 24000, 48],
  ] as const) {
    test(`${format}: MP3 at ${rate} Hz, ${kbps} kb/s, of the speech's length`, async () => {
      const probed = await ffprobe(await speak(format), "mp3");
      expect(probed).toMatchObject({ codec: "mp3", sampleRate: rate, channels: 1, bitRate: kbps * 1000 });
      expect(Math.abs(probed.seconds - pcmSeconds)).toBeLessThan(0.1); // LAME's padding is a frame or two
    });
  }

  for (const kbps of [32, 64] as const) {
    test(`opus_48000_${kbps}: Ogg Opus at 48 kHz, about ${kbps} kb/s, of the speech's length`, async () => {
      const probed = await ffprobe(await speak(`opus_48000_${kbps}`), "ogg");
      expect(probed).toMatchObject({ codec: "opus", sampleRate: 48000, channels: 1 });
      expect(Math.abs(probed.seconds - pcmSeconds)).toBeLessThan(0.01); // the end page's granule trims the padding exactly
      expect(probed.bytes / probed.seconds / 125).toBeGreaterThan(kbps * 0.6); // kb/s, VBR around the target
      expect(probed.bytes / probed.seconds / 125).toBeLessThan(kbps * 1.4);
    });
  }

  for (const rate of [8000, 16000, 44100] as const) {
    test(`wav_${rate}: 16-bit PCM WAV at ${rate} Hz, of the speech's length`, async () => {
      const probed = await ffprobe(await speak(`wav_${rate}`), "wav");
      expect(probed).toMatchObject({ codec: "pcm_s16le", sampleRate: rate, channels: 1 });
      expect(Math.abs(probed.seconds - pcmSeconds)).toBeLessThan(0.05);
    });
  }

  test("ulaw_8000 and alaw_8000 decode as G.711 of the speech's length", async () => {
    for (const [format, codec] of [
      ["ulaw_8000", "mulaw"],
      ["alaw_8000", "alaw"],
    ] as const) {
      const raw = await speak(format);
      const path = `/tmp/voxroute-g711-${crypto.randomUUID()}.raw`;
      await Bun.write(path, raw);
      const decoded = Bun.spawnSync(["ffmpeg", "-v", "error", "-f", codec, "-ar", "8000", "-ac", "1", "-i", path, "-f", "s16le", "-"]);
      await Bun.file(path).delete();
      expect(decoded.exitCode).toBe(0);
      expect(Math.abs(decoded.stdout.byteLength / 2 / 8000 - pcmSeconds)).toBeLessThan(0.05);
      expect(Math.max(...new Int16Array(decoded.stdout.buffer, 0, decoded.stdout.byteLength >> 1).map(Math.abs))).toBeGreaterThan(1000); // speech, not silence
    }
  });

  test("mp3_44100_128 passes an engine's own MP3 through untouched, and is LAME's from a model that emits only PCM", async () => {
    expect(await ffprobe(await speak("mp3_44100_128"), "mp3")).toMatchObject({ codec: "mp3", sampleRate: 16000 }); // Flite's own MP3
    const res = await fetch(`${server.url}/el/v1/text-to-speech/slt?output_format=mp3_44100_128`, {
      method: "POST",
      headers: { "xi-api-key": server.key, "content-type": "application/json" },
      body: JSON.stringify({ text: "Tone.", model_id: "fixed/echo" }),
    });
    const probed = await ffprobe(new Uint8Array(await res.arrayBuffer()), "mp3");
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 44100, bitRate: 128_000 });
    expect(Math.abs(probed.seconds - 0.1)).toBeLessThan(0.06); // five 20 ms chunks
  });

  test("an MP3 rate or bitrate MPEG does not have is 400 invalid_output_format", async () => {
    const res = await fetch(`${server.url}/el/v1/text-to-speech/slt?output_format=mp3_44100_100`, {
      method: "POST",
      headers: { "xi-api-key": server.key, "content-type": "application/json" },
      body: JSON.stringify({ text, model_id: "flite" }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ detail: { status: "invalid_output_format", param: "output_format" } });
  });
});
