import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startFakeApp, type FakeApp } from "./fakes/conversation-relay-app.ts";
import { callProfile, realtimeProfile, transcribe, until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect, type Recording } from "./helpers/ws-client.ts";

// Pronunciation dictionaries on the native API: made on /v1/pronunciation-dictionaries, named by
// `pronunciation_dictionaries` on /v1/tts. The router applies alias rules to the utterances it
// cuts, so a word split across text frames is still matched; billing counts the caller's text.

let server: TestServer;
let app: FakeApp;
beforeAll(async () => {
  server = await startTestServer();
  app = startFakeApp();
});
afterAll(() => {
  app.stop();
  server.stop(0);
});

async function dictionary(key: string, rules: unknown[]): Promise<{ id: string; version_id: string; rules_count: number }> {
  const res = await fetch(`${server.url}/v1/pronunciation-dictionaries`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json" },
    body: JSON.stringify({ name: "brands", rules }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; version_id: string; rules_count: number };
}

async function speak(key: string, frames: string[], query = ""): Promise<Recording> {
  const c = connect(server.wsUrl(`/v1/tts?model=flite&voice=slt${query}`), bearer(key));
  await c.opened;
  for (const text of frames) c.send({ type: "text", text });
  c.send({ type: "close" });
  return c.closed;
}

const pcmOf = (rec: Recording) => Buffer.concat(rec.audio);
const VOXROUTE = { type: "alias", string_to_replace: "voxroute", alias: "vox root", case_sensitive: false };

describe("pronunciation dictionaries on /v1", () => {
  test("made, read and listed in the native envelope", async () => {
    const { key } = await fundedAccount(server);
    const made = await dictionary(key, [VOXROUTE]);
    expect(made.rules_count).toBe(1);
    const got = (await (await fetch(`${server.url}/v1/pronunciation-dictionaries/${made.id}`, { headers: bearer(key) })).json()) as Record<string, unknown>;
    expect(got).toMatchObject({ id: made.id, name: "brands", version_id: made.version_id, rules: [{ ...VOXROUTE, word_boundaries: true }] });
    const list = (await (await fetch(`${server.url}/v1/pronunciation-dictionaries`, { headers: bearer(key) })).json()) as { dictionaries: { id: string }[]; has_more: boolean };
    expect(list).toMatchObject({ dictionaries: [{ id: made.id }], has_more: false });
  });

  test("a word split across /v1/tts frames is still matched; billing counts the characters sent", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const made = await dictionary(key, [VOXROUTE]);
    const split = await speak(key, ["Welcome to vox", "RouTe, friends."], `&pronunciation_dictionaries=${made.id}`);
    const written = await speak(key, ["Welcome to vox root, friends."]);
    const plain = await speak(key, ["Welcome to voxRouTe, friends."]);
    expect(split.close.code).toBe(1000);
    expect(pcmOf(split).byteLength).toBeGreaterThan(16_000);
    expect(pcmOf(split).equals(pcmOf(written))).toBe(true);
    expect(pcmOf(split).equals(pcmOf(plain))).toBe(false);
    expect(split.events.find((e) => e.type === "service.tts_session_ended")?.characters).toBe("Welcome to voxRouTe, friends.".length);
    expect((await lastActivity(server, tenantId)).usageAmount).toBe("Welcome to voxRouTe, friends.".length);
  });

  test("an unknown dictionary ends the session with not_found", async () => {
    const { key } = await fundedAccount(server);
    const rec = await speak(key, ["Hello."], "&pronunciation_dictionaries=nosuchdictionary");
    expect(rec.events.some((e) => JSON.stringify(e).includes("not_found"))).toBe(true);
  });

  test.skipIf(!localSttAvailable)("PocketSphinx hears the alias in Flite's audio", async () => {
    const { key } = await fundedAccount(server);
    const made = await dictionary(key, [VOXROUTE]);
    // PocketSphinx's en-us model hears Flite's "vox" as "box" (and "root" as "and"): the test is
    // that it hears the dictionary's audio as it hears the alias written out, and the word without
    // the dictionary as something else.
    const said = await transcribe(server, pcmOf(await speak(key, ["The voxroute server."], `&pronunciation_dictionaries=${made.id}`)));
    const written = await transcribe(server, pcmOf(await speak(key, ["The vox root server."])));
    const plain = await transcribe(server, pcmOf(await speak(key, ["The voxroute server."])));
    expect(said).toContain("box");
    expect(said).toBe(written);
    expect(plain).not.toContain("box");
  });

  test("a realtime profile's pipeline.tts.pronunciation_dictionaries: kept as locators, its greeting said with them; not a member of the STT stage", async () => {
    const { key } = await fundedAccount(server);
    const made = await dictionary(key, [VOXROUTE]);
    const greet = async (greeting: string, tts: Record<string, unknown>) => {
      const c = await callProfile(server, await realtimeProfile(server, key, app.url("/echo"), { greeting, tts: { model: "flite", voice: "slt", ...tts } }), key);
      await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
      c.ws.close();
      return Buffer.concat(c.rec.audio);
    };
    const said = await greet("The voxroute server.", { pronunciation_dictionaries: [made.id] });
    const written = await greet("The vox root server.", {});
    expect(said.byteLength).toBeGreaterThan(16_000);
    expect(said.equals(written)).toBe(true);

    const res = await fetch(`${server.url}/v1/realtime/profiles`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({
        name: "p",
        pipeline: {
          stt: { model: "pocketsphinx" },
          tts: { model: "flite", voice: "slt", pronunciation_dictionaries: [{ pronunciation_dictionary_id: made.id, version_id: made.version_id }] },
          upstream: { url: app.url("/echo") },
        },
      }),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { pipeline: { tts: Record<string, unknown> } }).pipeline.tts.pronunciation_dictionaries).toEqual([
      { pronunciation_dictionary_id: made.id, version_id: made.version_id },
    ]);
    const stt = await fetch(`${server.url}/v1/realtime/profiles`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({
        name: "p",
        pipeline: { stt: { model: "pocketsphinx", pronunciation_dictionaries: [made.id] }, tts: { model: "flite", voice: "slt" }, upstream: { url: app.url("/echo") } },
      }),
    });
    expect(stt.status).toBe(400);
  }, 30_000);
});

describe("pronunciation dictionaries on /el stream-input", () => {
  test("the init frame's pronunciation_dictionary_locators apply to the text that follows, split across frames", async () => {
    const { key } = await fundedAccount(server);
    const made = await dictionary(key, [VOXROUTE]);
    const stream = async (texts: string[], locators?: unknown) => {
      const c = connect(server.wsUrl("/el/v1/text-to-speech/slt/stream-input?model_id=flite&output_format=pcm_16000"), { "xi-api-key": key });
      c.send({ text: " ", ...(locators ? { pronunciation_dictionary_locators: locators } : {}) });
      for (const text of texts) c.send({ text });
      c.send({ text: "" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
      return Buffer.concat(rec.events.filter((e) => typeof e.audio === "string").map((e) => Buffer.from(e.audio, "base64")));
    };
    const said = await stream(["Welcome to voxr", "oute, friends. "], [{ pronunciation_dictionary_id: made.id, version_id: made.version_id }]);
    const written = await stream(["Welcome to vox root, friends. "]);
    expect(said.byteLength).toBeGreaterThan(16_000);
    expect(said.equals(written)).toBe(true);
  });
});

describe("pronunciation dictionaries on /oai/audio/speech", () => {
  test("the body's pronunciation_dictionaries (ids or locators) apply; a malformed one is 400", async () => {
    const { key } = await fundedAccount(server);
    const made = await dictionary(key, [VOXROUTE]);
    const speech = (input: string, extra: Record<string, unknown> = {}) =>
      fetch(`${server.url}/oai/audio/speech`, {
        method: "POST",
        headers: { ...bearer(key), "content-type": "application/json" },
        body: JSON.stringify({ model: "flite", voice: "slt", input, response_format: "pcm", ...extra }),
      });
    const said = Buffer.from(await (await speech("The voxroute server.", { pronunciation_dictionaries: [made.id] })).arrayBuffer());
    const located = Buffer.from(await (await speech("The voxroute server.", { pronunciation_dictionaries: [{ pronunciation_dictionary_id: made.id, version_id: made.version_id }] })).arrayBuffer());
    const written = Buffer.from(await (await speech("The vox root server.")).arrayBuffer());
    expect(said.byteLength).toBeGreaterThan(16_000);
    expect(said.equals(written)).toBe(true);
    expect(located.equals(written)).toBe(true);
    const bad = await speech("Hi.", { pronunciation_dictionaries: "not-a-list" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe("pronunciation_dictionaries");
  });
});
