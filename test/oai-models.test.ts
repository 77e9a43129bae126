import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { openAiSdk, startServerWithOpenAiSdk } from "./helpers/sdk-clients.ts";
import type { TestServer } from "./helpers/server.ts";

// GET /oai/models and /oai/models/{id} through the OpenAI SDK: the deployment's TTS and STT models,
// each id one that /oai's `model` parameters accept.

let server: TestServer;
let client: OpenAI;
beforeAll(async () => void ({ server, client } = await startServerWithOpenAiSdk()));
afterAll(() => server.stop(0));

describe("/oai/models with the OpenAI SDK", () => {
  test("models.list(): every TTS and STT binding as {id, object, created, owned_by}", async () => {
    const models = [];
    for await (const m of client.models.list()) models.push(m);
    const ids = models.map((m) => m.id);
    const expected = new Set(server.ctx.catalogue.bindings.map((b) => `${b.provider.id}/${b.id}`));
    expect(new Set(ids)).toEqual(expected);
    expect(ids.length).toBe(expected.size);
    expect(ids).toContain("flite/flite");
    expect(server.ctx.catalogue.bindings.some((b) => b.capability === "stt" && ids.includes(`${b.provider.id}/${b.id}`))).toBe(true);
    for (const m of models) {
      expect(m).toEqual({ id: m.id, object: "model", created: expect.any(Number), owned_by: m.id.split("/")[0]! });
    }
  });

  test("listed ids work as the model of speech and of transcription requests", async () => {
    const res = await client.audio.speech.create({ model: "flite/flite", voice: "slt", input: "Listed.", response_format: "pcm" });
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
    const stt = server.ctx.catalogue.bindings.find((b) => b.capability === "stt" && b.synchronous)!;
    const wav = await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer();
    const text = await client.audio.transcriptions.create({ model: `${stt.provider.id}/${stt.id}`, file: await toFile(wav, "speech.wav") });
    expect(text.text.length).toBeGreaterThan(0);
  });

  test("models.retrieve(): a listed id (its slash encoded by the SDK); an unknown one is 404 model_not_found", async () => {
    expect(await client.models.retrieve("flite/flite")).toMatchObject({ id: "flite/flite", object: "model", owned_by: "flite" });
    const err = await client.models.retrieve("nobody/nothing").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({ status: 404, code: "model_not_found", param: "model", type: "not_found_error" });
  });

  test("the slash may come unencoded; DELETE is not offered (501)", async () => {
    const auth = { authorization: `Bearer ${server.key}` };
    expect(await (await fetch(`${server.url}/oai/models/flite/flite`, { headers: auth })).json()).toMatchObject({ id: "flite/flite" });
    expect((await fetch(`${server.url}/oai/models/flite%2Fflite`, { method: "DELETE", headers: auth })).status).toBe(501);
  });

  test("the key is checked: 401 without a valid one", async () => {
    const err = await openAiSdk(server, "vx-nope")
      .models.list()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
