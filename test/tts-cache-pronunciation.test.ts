import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";
import { FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { startFakeOpenAi } from "./fakes/openai.ts";
import { elevenLabsAt, openAiAt } from "./fakes/server-env.ts";

// The TTS cache under the pronunciation dictionaries (docs/tts-cache.md#keys): an entry is keyed
// on the text as the provider is given it and on the dictionaries' versions, so a dictionary
// added or changed is a miss, and the next request with it a hit.

const openai = startFakeOpenAi();
const elevenlabs = startFakeElevenLabs();
let server: TestServer;
let account: { key: string; tenantId: string };

beforeAll(async () => {
  server = await startTestServer({ TTS_CACHE_BYTES: String(64 * 1024 * 1024), ...openAiAt(openai), ...elevenLabsAt(elevenlabs) });
  account = await fundedAccount(server);
});
afterAll(() => stopServerAndFakes(server, openai, elevenlabs));

async function dictionaryCall(path: string, body: unknown): Promise<{ id: string; version_id: string }> {
  const res = await fetch(`${server.url}/v1/pronunciation-dictionaries${path}`, {
    method: "POST",
    headers: { ...bearer(account.key), "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.ok).toBe(true);
  return (await res.json()) as { id: string; version_id: string };
}

/** Speaks `text` on /v1/tts; the texts the OpenAI fake was asked to say meanwhile (none: a hit). */
async function spoken(text: string, dictionaries?: string): Promise<unknown[]> {
  const before = openai.speech.length;
  const query = `model=tts-1&voice=alloy&format=pcm${dictionaries ? `&pronunciation_dictionaries=${dictionaries}` : ""}`;
  const c = connect(server.wsUrl(`/v1/tts?${query}`), bearer(account.key));
  c.send({ type: "text", text });
  c.send({ type: "close" });
  const rec = await c.closed;
  expect(rec.close.code).toBe(1000);
  expect(rec.audio.length).toBeGreaterThan(0);
  return openai.speech.slice(before).map((r) => r.body.input);
}

describe("the TTS cache with pronunciation dictionaries", () => {
  test("a dictionary added, then changed, is a miss and then a hit; the entry keeps the provider's text and bills the caller's", async () => {
    const TEXT = "Welcome to voxroute.";
    expect(await spoken(TEXT)).toEqual([TEXT]);
    expect(await spoken(TEXT)).toEqual([]);

    const made = await dictionaryCall("", { name: "brand", rules: [{ type: "alias", string_to_replace: "voxroute", alias: "vox root" }] });
    expect(await spoken(TEXT, made.id)).toEqual(["Welcome to vox root."]);
    expect(await spoken(TEXT, made.id)).toEqual([]);
    // Billed as the caller wrote it: 20 characters, all played from the cache.
    expect(await lastActivity(server, account.tenantId)).toMatchObject({ usageAmount: [...TEXT].length, cachedUnits: [...TEXT].length });

    const updated = await dictionaryCall(`/${made.id}/add-rules`, { rules: [{ type: "alias", string_to_replace: "Welcome", alias: "Hello" }] });
    expect(updated.version_id).not.toBe(made.version_id);
    expect(await spoken(TEXT, made.id)).toEqual(["Hello to vox root."]);
    expect(await spoken(TEXT, made.id)).toEqual([]);
    // The first version, named with its id, is still its own entry.
    expect(await spoken(TEXT, `${made.id}:${made.version_id}`)).toEqual([]);
  });

  test("a phoneme rule to ElevenLabs is keyed on the text with its <phoneme> tag", async () => {
    const TEXT = "A tomato, please.";
    const TAGGED = 'A <phoneme alphabet="ipa" ph="təˈmɑːtoʊ">tomato</phoneme>, please.';
    const made = await dictionaryCall("", { name: "ipa", rules: [{ type: "phoneme", string_to_replace: "tomato", phoneme: "təˈmɑːtoʊ", alphabet: "ipa" }] });
    const said = async (): Promise<unknown[]> => {
      const before = elevenlabs.requests.length;
      const res = await fetch(`${server.url}/el/v1/text-to-speech/${FAKE_VOICE}?output_format=pcm_16000&transport=http`, {
        method: "POST",
        headers: { "xi-api-key": account.key, "content-type": "application/json" },
        body: JSON.stringify({ text: TEXT, model_id: "elevenlabs/eleven_flash_v2_5", pronunciation_dictionary_locators: [{ pronunciation_dictionary_id: made.id }] }),
      });
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0);
      return elevenlabs.requests.slice(before).map((r) => (r.body as { text?: unknown }).text);
    };
    expect(await said()).toEqual([TAGGED]);
    expect(await said()).toEqual([]);

    await dictionaryCall(`/${made.id}/remove-rules`, { rule_strings: ["tomato"] });
    expect(await said()).toEqual([TEXT]);
    expect(await said()).toEqual([]);
  });
});
