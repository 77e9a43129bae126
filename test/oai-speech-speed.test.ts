import { afterAll, beforeAll, expect, test } from "bun:test";
import type OpenAI from "openai";
import { startFakeOpenAi } from "./fakes/openai.ts";
import { openAiAt } from "./fakes/server-env.ts";
import { startServerWithOpenAiSdk } from "./helpers/sdk-clients.ts";
import { stopServerAndFakes, type TestServer } from "./helpers/server.ts";

// `speed` on /oai/audio/speech: passed to providers that honour it, 400 naming it where none of
// the model's providers can (eSpeak NG beyond its paces), never silently ignored.

const fake = startFakeOpenAi();
let server: TestServer;
let client: OpenAI;
beforeAll(async () => void ({ server, client } = await startServerWithOpenAiSdk({ ...openAiAt(fake), ESPEAK_ENABLED: "true" })));
afterAll(() => stopServerAndFakes(server, fake));

test("a cloud provider with its own speed gets it", async () => {
  const res = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "Faster, please.", response_format: "pcm", speed: 1.5 });
  expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
  expect(fake.speech.at(-1)!.body).toMatchObject({ model: "tts-1", speed: 1.5 });
});

const FLITE: [string, string] = ["flite", "slt"];
const ESPEAK: [string, string] = ["espeak", "en-us"];
const PICO: [string, string] = ["svox-pico", "en-US"];
const pcmAt = async ([model, voice]: [string, string], speed: number) => {
  const res = await client.audio.speech.create({ model, voice, input: "At a pace of your choosing, please, and then some more words.", response_format: "pcm", speed });
  return (await res.arrayBuffer()).byteLength;
};

test("Flite honours speed with its own pace setting: twice as fast is about half as long", async () => {
  const [natural, fast, slow] = [await pcmAt(FLITE, 1), await pcmAt(FLITE, 2), await pcmAt(FLITE, 0.5)];
  expect(fast / natural).toBeGreaterThan(0.4);
  expect(fast / natural).toBeLessThan(0.65);
  expect(slow / natural).toBeGreaterThan(1.6);
  expect(slow / natural).toBeLessThan(2.4);
});

test("eSpeak NG honours speed within its range of paces (80-450 words a minute); beyond it, 400 naming speed", async () => {
  const [natural, fast] = [await pcmAt(ESPEAK, 1), await pcmAt(ESPEAK, 2)];
  expect(fast / natural).toBeGreaterThan(0.4);
  expect(fast / natural).toBeLessThan(0.65);
  const err = await client.audio.speech.create({ model: "espeak", voice: "en-us", input: "Too fast.", speed: 3 }).catch((e) => e);
  expect(err).toMatchObject({ status: 400, code: "invalid_request", param: "speed" });
});

test("Pico honours speed with its own pace markup: faster is shorter, slower longer", async () => {
  const [natural, fast, slow] = [await pcmAt(PICO, 1), await pcmAt(PICO, 2), await pcmAt(PICO, 0.5)];
  expect(fast / natural).toBeLessThan(0.8); // its pauses keep their length: not quite half
  expect(slow / natural).toBeGreaterThan(1.5);
});
