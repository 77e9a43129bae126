import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ElevenLabsClient } from "@elevenlabs/elevenlabs-js";
import { FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { FixedPcmProvider, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { mp3, speech } from "./fakes/http-fake.ts";
import { elevenLabsAt } from "./fakes/server-env.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { startServerWithElevenLabsSdk } from "./helpers/sdk-clients.ts";
import { stopServerAndFakes, type TestServer } from "./helpers/server.ts";

// /el output formats transcoded from the engine's PCM, asked through the official SDK and read
// back with ffprobe/ffmpeg: the asked rate and bitrate, and the speech's length. ElevenLabs (a
// fake of it) shows which MP3 passes through untouched.

const elevenlabs = startFakeElevenLabs();
let server: TestServer;
let client: ElevenLabsClient;
beforeAll(async () => {
  ({ server, client } = await startServerWithElevenLabsSdk(elevenLabsAt(elevenlabs), {
    extra: { catalogue: testCatalogue(["fixed"]), providers: [new FixedPcmProvider("fixed", 5)] },
  }));
});
afterAll(() => stopServerAndFakes(server, elevenlabs));

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
    ["mp3_44100_128", 44100, 128], // the default: Flite's own MP3 is 16 kHz, so it is LAME's too
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

  test("mp3_44100_128 from a model that emits only PCM is LAME's", async () => {
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

describe("/el MP3 from a provider that makes it", () => {
  const text = "Straight from the provider.";
  const viaHttp = { queryParams: { transport: "http" } }; // one upstream request, whose bytes the fake makes predictably
  const convert = async (outputFormat: Format) =>
    new Uint8Array(await new Response(await client.textToSpeech.convert(FAKE_VOICE, { text, modelId: "elevenlabs/eleven_flash_v2_5", outputFormat }, viaHttp)).arrayBuffer());

  test("mp3_44100_128, which ElevenLabs emits, is its own bytes untouched", async () => {
    const audio = await convert("mp3_44100_128");
    expect(elevenlabs.requests.at(-1)!.query.output_format).toBe("mp3_44100_128");
    expect(Buffer.from(audio).equals(mp3(speech(text, 44100), 44100))).toBe(true); // the fake's MP3, byte for byte
  });

  test("mp3_44100_64, which it does not emit, is LAME's from its PCM", async () => {
    const probed = await ffprobe(await convert("mp3_44100_64"), "mp3");
    expect(elevenlabs.requests.at(-1)!.query.output_format).toMatch(/^pcm_/);
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 44100, channels: 1, bitRate: 64_000 });
    expect(Math.abs(probed.seconds - speech(text, 16000).byteLength / 2 / 16000)).toBeLessThan(0.1);
  });
});
