import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ElevenLabsClient } from "@elevenlabs/elevenlabs-js";
import { FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { elevenLabsAt } from "./fakes/server-env.ts";
import { startServerWithElevenLabsSdk } from "./helpers/sdk-clients.ts";
import { stopServerAndFakes, type TestServer } from "./helpers/server.ts";

// A phoneme rule goes to ElevenLabs, which says phonemes, as an SSML `<phoneme>` tag around the
// word; the same dictionary to a provider without phonemes falls back to the rule's alias.

const elevenlabs = startFakeElevenLabs();
let server: TestServer;
let client: ElevenLabsClient;
beforeAll(async () => {
  ({ server, client } = await startServerWithElevenLabsSdk(elevenLabsAt(elevenlabs)));
});
afterAll(() => stopServerAndFakes(server, elevenlabs));

const viaHttp = { queryParams: { transport: "http" } };

describe("phoneme rules", () => {
  test("ElevenLabs is given the word in a <phoneme> tag; Flite says the rule's alias", async () => {
    // `alias` on a phoneme rule is this router's own member: the SDK would strip it.
    const res = await fetch(`${server.url}/el/v1/pronunciation-dictionaries/add-from-rules`, {
      method: "POST",
      headers: { "xi-api-key": server.key, "content-type": "application/json" },
      body: JSON.stringify({ name: "ipa", rules: [{ type: "phoneme", string_to_replace: "tomato", phoneme: "təˈmɑːtoʊ", alphabet: "ipa", alias: "tomahto" }] }),
    });
    const made = (await res.json()) as { id: string };
    const locators = [{ pronunciationDictionaryId: made.id }];
    await new Response(
      await client.textToSpeech.convert(FAKE_VOICE, { text: "A tomato, please.", modelId: "elevenlabs/eleven_flash_v2_5", pronunciationDictionaryLocators: locators }, viaHttp),
    ).arrayBuffer();
    expect(elevenlabs.requests.at(-1)!.body.text).toBe('A <phoneme alphabet="ipa" ph="təˈmɑːtoʊ">tomato</phoneme>, please.');

    const pcm = async (text: string, withLocators: boolean) =>
      Buffer.from(
        await new Response(
          await client.textToSpeech.convert("slt", { text, modelId: "flite", outputFormat: "pcm_16000", ...(withLocators ? { pronunciationDictionaryLocators: locators } : {}) }),
        ).arrayBuffer(),
      );
    expect((await pcm("A tomato, please.", true)).equals(await pcm("A tomahto, please.", false))).toBe(true);
  });
});
