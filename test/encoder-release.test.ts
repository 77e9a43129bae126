import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { liveAacEncoders } from "../src/audio/aac.ts";
import { liveFlacEncoders } from "../src/audio/flac.ts";
import { BrokenProvider, FixedPcmProvider, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// The AAC and FLAC encoders live in heaps outside JavaScript's (AAC's WebAssembly, libFLAC's
// asm.js) that grow to hold them and never shrink: every answer must free its encoder, however it
// ends. The provider that fails here sends 20 ms of audio first, less than either encoder needs
// for its first packet, so the answer is still the error, not a body.

let server: TestServer;
let sdk: OpenAI;
beforeAll(async () => {
  server = await startTestServer({}, { extra: { catalogue: testCatalogue(["fixed", "dying"]), providers: [new FixedPcmProvider("fixed", 5), new BrokenProvider("dying", "fail-after-audio")] } });
  sdk = new OpenAI({ apiKey: server.key, baseURL: `${server.url}/oai`, maxRetries: 0 });
});
afterAll(() => server.stop(0));

const REQUESTS = 20;
const live = () => ({ aac: liveAacEncoders(), flac: liveFlacEncoders() });
const NONE = { aac: 0, flac: 0 };
const dying = { model: "dying/echo", voice: "any", input: "This provider dies." };

describe("/oai/audio/speech: every answer frees its encoder, however it ends", () => {
  test(`aac: ${REQUESTS} requests whose provider fails before the encoder's first packet each answer 502 upstream_error, and no encoder is left`, async () => {
    for (let i = 0; i < REQUESTS; i++) {
      const error = await sdk.audio.speech.create({ ...dying, response_format: "aac" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error).toMatchObject({ status: 502, code: "upstream_error" });
    }
    expect(live()).toEqual(NONE);
  });

  test(`aac as server-sent events: ${REQUESTS} such requests answer 502 before any delta, and no encoder is left`, async () => {
    for (let i = 0; i < REQUESTS; i++) {
      const res = await fetch(`${server.url}/oai/audio/speech`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
        body: JSON.stringify({ ...dying, response_format: "aac", stream_format: "sse" }),
      });
      expect(res.status).toBe(502);
      expect(await res.json()).toMatchObject({ error: { code: "upstream_error" } });
    }
    expect(live()).toEqual(NONE);
  });

  test(`flac, whose header goes out at once: ${REQUESTS} answers broken off by the provider's failure, and no encoder is left`, async () => {
    for (let i = 0; i < REQUESTS; i++) {
      const read = sdk.audio.speech.create({ ...dying, response_format: "flac" }).then((res) => res.arrayBuffer());
      expect(
        await read.then(
          () => "read",
          () => "broken off",
        ),
      ).toBe("broken off");
    }
    expect(live()).toEqual(NONE);
  });

  test.each(["aac", "flac"] as const)("%s: whole answers free their encoders too", async (format) => {
    for (let i = 0; i < 3; i++) {
      const res = await sdk.audio.speech.create({ model: "fixed/echo", voice: "any", input: "Tone.", response_format: format });
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
    expect(live()).toEqual(NONE);
  });
});
