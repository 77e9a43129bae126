import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type OpenAI from "openai";
import { FAKE_OPENAI_KEY, startFakeOpenAi } from "./fakes/openai.ts";
import { mp3, speech } from "./fakes/http-fake.ts";
import { openAiAt } from "./fakes/server-env.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { openAiSdk, startServerWithOpenAiSdk } from "./helpers/sdk-clients.ts";
import { stopServerAndFakes, type TestServer } from "./helpers/server.ts";

// /oai response formats transcoded from the engine's PCM, asked through the official SDK and read
// back with ffprobe/ffmpeg. OpenAI (a fake of it, also serving `tts-1` as an OpenAI-compatible
// server whose MP3 rate is not known) shows which MP3 passes through untouched.

const openai = startFakeOpenAi();
let server: TestServer;
let sdk: OpenAI;
beforeAll(async () => {
  ({ server, client: sdk } = await startServerWithOpenAiSdk({
    ...openAiAt(openai),
    OPENAI_COMPATIBLE_API_KEY: FAKE_OPENAI_KEY,
    OPENAI_COMPATIBLE_BASE_URL: openai.url,
    OPENAI_COMPATIBLE_TTS_MODELS: "tts-1",
    OPENAI_COMPATIBLE_TTS_PRICE: "0.002",
  }));
});
afterAll(() => stopServerAndFakes(server, openai));

const input = "The router encodes this sentence in the format the caller asked for.";
const speak = async (response_format: "pcm" | "mp3" | "opus" | "aac" | "flac", model = "flite", voice = "slt") => {
  const res = await sdk.audio.speech.create({ model, voice, input, response_format });
  return { type: res.headers.get("content-type"), bytes: new Uint8Array(await res.arrayBuffer()) };
};

describe("/oai response formats transcoded from PCM", () => {
  let pcmSeconds: number;
  beforeAll(async () => {
    pcmSeconds = (await speak("pcm")).bytes.byteLength / 2 / 24000;
  });

  test("mp3: MP3 at OpenAI's 24 kHz (not Flite's own 16 kHz MP3), of the speech's length", async () => {
    const res = await speak("mp3");
    expect(res.type).toBe("audio/mpeg");
    const probed = await ffprobe(res.bytes, "mp3");
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 24000, channels: 1, bitRate: 64_000 });
    expect(Math.abs(probed.seconds - pcmSeconds)).toBeLessThan(0.1); // LAME's padding is a frame or two
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

describe("/oai mp3 from providers that make MP3", () => {
  test("from OpenAI, whose own MP3 is 24 kHz: its bytes untouched", async () => {
    const res = await speak("mp3", "openai/tts-1", "alloy");
    expect(res.type).toBe("audio/mpeg");
    expect(openai.speech.at(-1)!.body).toMatchObject({ model: "tts-1", response_format: "mp3" });
    expect(Buffer.from(res.bytes).equals(mp3(speech(input, 24000), 24000))).toBe(true); // the fake's MP3, byte for byte
  });

  test("from a model also served by a provider of unknown MP3 rate: the session asks for PCM, and falls back to that provider", async () => {
    const { key, tenantId } = await fundedAccount(server); // its one activity record is this request's
    openai.fault("500"); // OpenAI, the first candidate, fails before any audio
    const res = await openAiSdk(server, key).audio.speech.create({ model: "tts-1", voice: "alloy", input, response_format: "mp3" });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "openai-compatible", status: "completed" });
    expect(openai.speech.at(-1)!.body).toMatchObject({ model: "tts-1", response_format: "pcm" });
    const probed = await ffprobe(new Uint8Array(await res.arrayBuffer()), "mp3");
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 24000, bitRate: 64_000 });
    expect(Math.abs(probed.seconds - speech(input, 24000).byteLength / 2 / 24000)).toBeLessThan(0.1);
  });
});
