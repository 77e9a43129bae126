import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { ffprobe } from "./helpers/ffprobe.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// /oai response formats transcoded from the engine's PCM, asked through the official SDK and read
// back with ffprobe/ffmpeg.

let server: TestServer;
let sdk: OpenAI;
beforeAll(async () => {
  server = await startTestServer();
  sdk = new OpenAI({ apiKey: server.key, baseURL: `${server.url}/oai`, maxRetries: 0 });
});
afterAll(() => server.stop(0));

const input = "The router encodes this sentence in the format the caller asked for.";
const speak = async (response_format: "pcm" | "opus" | "aac" | "flac") => {
  const res = await sdk.audio.speech.create({ model: "flite", voice: "slt", input, response_format });
  return { type: res.headers.get("content-type"), bytes: new Uint8Array(await res.arrayBuffer()) };
};

describe("/oai response formats transcoded from PCM", () => {
  let pcmSeconds: number;
  beforeAll(async () => {
    pcmSeconds = (await speak("pcm")).bytes.byteLength / 2 / 24000;
  });

  test("flac: FLAC at 24 kHz, of the speech's length", async () => {
    const flac = await speak("flac");
    expect(flac.type).toBe("audio/flac");
    const probed = await ffprobe(flac.bytes, "flac");
    expect(probed).toMatchObject({ codec: "flac", sampleRate: 24000, channels: 1 });
    expect(Math.abs(probed.seconds - pcmSeconds)).toBeLessThan(0.01); // lossless: every sample comes back
  });

  test("flac as server-sent events: the joined deltas, the encoder's last frames included, are the same lossless FLAC", async () => {
    const res = await sdk.audio.speech.create({ model: "flite", voice: "slt", input, response_format: "flac", stream_format: "sse" });
    const deltas = (await res.text())
      .split("\n\n")
      .map((block) => block.split("data: ")[1])
      .filter((data): data is string => Boolean(data))
      .map((data) => JSON.parse(data) as { type: string; audio?: string })
      .filter((e) => e.type === "speech.audio.delta");
    const flac = Buffer.concat(deltas.map((e) => Buffer.from(e.audio!, "base64")));
    const probed = await ffprobe(flac, "flac");
    expect(probed).toMatchObject({ codec: "flac", sampleRate: 24000 });
    expect(Math.abs(probed.seconds - pcmSeconds)).toBeLessThan(0.01);
  });

  test("opus: Ogg Opus at 48 kHz, of the speech's length", async () => {
    const opus = await speak("opus");
    expect(opus.type).toBe("audio/ogg");
    const probed = await ffprobe(opus.bytes, "ogg");
    expect(probed).toMatchObject({ codec: "opus", sampleRate: 48000, channels: 1 });
    expect(Math.abs(probed.seconds - pcmSeconds)).toBeLessThan(0.01);
  });

  test("aac: ADTS AAC-LC at 24 kHz, of the speech's length", async () => {
    const aac = await speak("aac");
    expect(aac.type).toBe("audio/aac");
    const probed = await ffprobe(aac.bytes, "aac");
    expect(probed).toMatchObject({ codec: "aac", sampleRate: 24000, channels: 1 });
    // ADTS cannot mark the encoder's priming or the last frame's padding: one or two 1024-sample frames more.
    expect(probed.seconds - pcmSeconds).toBeGreaterThanOrEqual(0);
    expect(probed.seconds - pcmSeconds).toBeLessThanOrEqual((2 * 1024) / 24000);
  });
});
