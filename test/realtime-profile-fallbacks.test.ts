import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { planConversation } from "../src/realtime/plan.ts";
import type { RealtimeProfile } from "../src/realtime/profiles.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// Fallback chains in realtime profiles: `pipeline.stt.fallbacks` and `pipeline.tts.fallbacks`
// (and an /el Speech Engine's `service` block), checked at create, returned by GET, planned into
// the conversation's typed requests.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

const PIPELINE = {
  stt: { model: "pocketsphinx", input: { audio_format: "pcm_16000" }, fallbacks: [{ model: "cmu/pocketsphinx-en-us" }] },
  tts: {
    model: "flite",
    voice: "slt",
    fallbacks: [
      { model: "espeak", voice: "en-gb" },
      { model: "svox/pico", voice: "en-US" },
    ],
  },
  upstream: { url: "wss://app.example/voice", headers: {} },
};
const post = (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${server.key}` }) =>
  fetch(`${server.url}${path}`, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("realtime profiles with fallbacks", () => {
  test("create, GET returns them, and the conversation's plan chains them with their voices", async () => {
    const res = await post("/v1/realtime/profiles", { name: "chained", pipeline: PIPELINE });
    expect(res.status).toBe(201);
    const created = (await res.json()) as RealtimeProfile;
    expect(created.pipeline).toMatchObject({ stt: { fallbacks: PIPELINE.stt.fallbacks }, tts: { fallbacks: PIPELINE.tts.fallbacks } });
    const got = (await (await fetch(`${server.url}/v1/realtime/profiles/${created.id}`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as RealtimeProfile;
    expect(got.pipeline.tts.fallbacks).toEqual(PIPELINE.tts.fallbacks);
    expect(got.pipeline.stt.fallbacks).toEqual(PIPELINE.stt.fallbacks);

    const plan = planConversation(server.ctx.catalogue, (id) => server.ctx.sttProviders.get(id), got.pipeline);
    expect(plan.tts.candidates.map((c) => `${c.provider.id}:${c.voice}:${c.fallback ?? "primary"}`)).toEqual(["flite:slt:primary", "espeak-ng:en-gb:0", "svox-pico:en-US:1"]);
  });

  test("a bad fallback is refused at create, naming it", async () => {
    const bad = async (stage: "stt" | "tts", fallbacks: unknown, input?: unknown) => {
      const pipeline = { ...PIPELINE, [stage]: { ...PIPELINE[stage], fallbacks, ...(input ? { input } : {}) } };
      const res = await post("/v1/realtime/profiles", { name: "bad", pipeline });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    expect(
      await bad("tts", [
        { model: "espeak", voice: "en-gb" },
        { model: "nope", voice: "x" },
      ]),
    ).toMatchObject({ status: 400, body: { error: "model_not_found", param: "pipeline.tts.fallbacks[1].model" } });
    expect(await bad("tts", [{ model: "svox/pico" }])).toMatchObject({ status: 400, body: { error: "voice_required", param: "pipeline.tts.fallbacks[0].voice" } });
    expect(await bad("tts", [{ model: "pocketsphinx" }])).toMatchObject({ status: 400, body: { error: "model_not_found", param: "pipeline.tts.fallbacks[0].model" } });
    expect(
      await bad(
        "tts",
        Array.from({ length: 6 }, () => ({ model: "espeak" })),
      ),
    ).toMatchObject({ status: 400, body: { error: "invalid_request", param: "pipeline.tts.fallbacks" } });
    expect(await bad("stt", [{ model: "pocketsphinx", voice: "x" }])).toMatchObject({ status: 400, body: { error: "invalid_request", param: "pipeline.stt.fallbacks[0].voice" } });
    expect(await bad("stt", { model: "pocketsphinx" })).toMatchObject({ status: 400, body: { error: "invalid_request", param: "pipeline.stt.fallbacks" } });
    expect(await bad("stt", undefined, { audio_format: "pcm_16000", fallbacks: '[{"model":"pocketsphinx"}]' })).toMatchObject({ status: 400, body: { param: "pipeline.stt.input.fallbacks" } });
  });

  test("an /el Speech Engine's service block keeps them", async () => {
    const res = await post(
      "/el/v1/speech-engine",
      {
        name: "engine",
        speech_engine: { ws_url: "wss://app.example/engine" },
        service: { stt: { model_id: "pocketsphinx" }, tts: { model_id: "flite", voice_id: "slt", fallbacks: [{ model: "espeak", voice: "en-gb" }] } },
      },
      { "xi-api-key": server.key },
    );
    expect(res.status).toBe(200);
    const engine = (await res.json()) as { speech_engine_id: string };
    const got = (await (await fetch(`${server.url}/el/v1/speech-engine/${engine.speech_engine_id}`, { headers: { "xi-api-key": server.key } })).json()) as Record<string, any>;
    expect(got.service.tts.fallbacks).toEqual([{ model: "espeak", voice: "en-gb" }]);
    const refused = await post(
      "/el/v1/speech-engine",
      { speech_engine: { ws_url: "wss://app.example/engine" }, service: { stt: { model_id: "pocketsphinx" }, tts: { model_id: "flite", fallbacks: [{ model: "svox/pico" }] } } },
      { "xi-api-key": server.key },
    );
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      detail: { status: "voice_required", param: "service.tts.fallbacks[0].voice", message: expect.stringMatching(/^service\.tts\.fallbacks\[0\]\.voice: /) },
    });
  });

  test("an /el Speech Engine's refusals name the members of its body, not the profile's", async () => {
    const refusal = async (body: Record<string, unknown>) => {
      const res = await post("/el/v1/speech-engine", { speech_engine: { ws_url: "wss://app.example/engine" }, ...body }, { "xi-api-key": server.key });
      return { status: res.status, detail: ((await res.json()) as { detail: Record<string, unknown> }).detail };
    };
    const stt = { model_id: "pocketsphinx" };
    expect(await refusal({ service: { stt: { ...stt, fallbacks: [{ model: "pocketsphinx", voice: "x" }] } } })).toMatchObject({ status: 400, detail: { param: "service.stt.fallbacks[0].voice" } });
    expect(await refusal({ service: { stt, tts: { model_id: "flite", fallbacks: [{ model: "nope", voice: "x" }] } } })).toMatchObject({
      status: 400,
      detail: { status: "model_not_found", param: "service.tts.fallbacks[0].model" },
    });
    expect(await refusal({ service: { stt: { model_id: "flite" } } })).toMatchObject({ status: 400, detail: { status: "model_not_found", param: "service.stt.model_id" } });
    expect(await refusal({ service: { stt, tts: { model_id: "flite", voice_id: "v".repeat(201) } } })).toMatchObject({ status: 400, detail: { param: "service.tts.voice_id" } });
    // Without `service.tts`, ElevenLabs' own `tts` block is read, and named.
    expect(await refusal({ service: { stt }, tts: { model_id: "pocketsphinx" } })).toMatchObject({ status: 400, detail: { param: "tts.model_id" } });
    expect(await refusal({ speech_engine: { ws_url: "https://not-a-socket" }, service: { stt, tts: { model_id: "flite" } } })).toMatchObject({
      status: 400,
      detail: { param: "speech_engine.ws_url" },
    });
  });
});
