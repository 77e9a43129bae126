import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElevenLabsClient, type ElevenLabsError } from "@elevenlabs/elevenlabs-js";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// ElevenLabs' pronunciation dictionaries through its own SDK, pointed at /el: made from rules and
// from a PLS file, listed, read, changed (each change a new version), downloaded as PLS, and named
// by locators in a text-to-speech request, which Flite then says as the rule says.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

const sdk = (apiKey: string) => new ElevenLabsClient({ apiKey, baseUrl: `${server.url}/el`, maxRetries: 0 });

const PLS = `<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon" alphabet="ipa" xml:lang="en-US">
  <lexeme><grapheme>tomato</grapheme><phoneme>/tə'meɪtoʊ/</phoneme></lexeme>
  <lexeme><grapheme>UN</grapheme><alias>United Nations</alias></lexeme>
</lexicon>`;

async function speech(client: ElevenLabsClient, text: string, locators?: { pronunciationDictionaryId: string; versionId?: string }[]): Promise<Uint8Array> {
  const stream = await client.textToSpeech.convert("slt", { text, modelId: "flite", outputFormat: "pcm_16000", ...(locators ? { pronunciationDictionaryLocators: locators } : {}) });
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

describe("pronunciation dictionaries with the ElevenLabs SDK", () => {
  test("add from rules and from a PLS file, list, get, add and remove rules, download, speak with locators", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const client = sdk(key);

    const made = await client.pronunciationDictionaries.createFromRules({
      name: "brands",
      description: "how we say our names",
      rules: [
        { type: "alias", stringToReplace: "voxroute", alias: "vox root", caseSensitive: false, wordBoundaries: true },
        { type: "phoneme", stringToReplace: "router", phoneme: "ˈɹuːtɚ", alphabet: "ipa" },
      ],
    });
    expect(made).toMatchObject({ name: "brands", description: "how we say our names", createdBy: tenantId, versionRulesNum: 2 });
    expect(made.id).toBeTruthy();
    expect(made.versionId).toBeTruthy();

    const fromFile = await client.pronunciationDictionaries.createFromFile({ name: "lexicon", file: new File([PLS], "lexicon.pls", { type: "application/pls+xml" }) });
    expect(fromFile.versionRulesNum).toBe(2);
    const lexicon = await client.pronunciationDictionaries.get(fromFile.id);
    expect(lexicon.rules).toEqual([
      { type: "phoneme", stringToReplace: "tomato", phoneme: "/tə'meɪtoʊ/", alphabet: "ipa", caseSensitive: true, wordBoundaries: true },
      { type: "alias", stringToReplace: "UN", alias: "United Nations", caseSensitive: true, wordBoundaries: true },
    ]);

    const listed = await client.pronunciationDictionaries.list({ pageSize: 1 });
    expect(listed.pronunciationDictionaries).toHaveLength(1);
    expect(listed.hasMore).toBe(true);
    const rest = await client.pronunciationDictionaries.list({ cursor: listed.nextCursor! });
    expect([...listed.pronunciationDictionaries, ...rest.pronunciationDictionaries].map((d) => d.name).sort()).toEqual(["brands", "lexicon"]);
    expect(rest.hasMore).toBe(false);

    const added = await client.pronunciationDictionaries.rules.add(made.id, { rules: [{ type: "alias", stringToReplace: "TTS", alias: "text to speech" }] });
    expect(added.versionRulesNum).toBe(3);
    expect(added.versionId).not.toBe(made.versionId);
    const removed = await client.pronunciationDictionaries.rules.remove(made.id, { ruleStrings: ["router"] });
    expect(removed.versionRulesNum).toBe(2);
    expect(removed.versionId).not.toBe(added.versionId);
    const now = await client.pronunciationDictionaries.get(made.id);
    expect(now).toMatchObject({ latestVersionId: removed.versionId, latestVersionRulesNum: 2 });
    expect(now.rules.map((r) => r.stringToReplace)).toEqual(["voxroute", "TTS"]);

    // The first version is kept as it was.
    const first = await new Response(await client.pronunciationDictionaries.download(made.id, made.versionId)).text();
    expect(first).toContain("<grapheme>voxroute</grapheme>");
    expect(first).toContain('<phoneme alphabet="ipa">ˈɹuːtɚ</phoneme>');
    const latest = await new Response(await client.pronunciationDictionaries.download(made.id, removed.versionId)).text();
    expect(latest).not.toContain("router");
    expect(latest).toContain("<alias>text to speech</alias>");

    // Flite is deterministic: the dictionary's text sounds exactly like the alias written out.
    const said = await speech(client, "Try voxroute today.", [{ pronunciationDictionaryId: made.id }]);
    const written = await speech(client, "Try vox root today.");
    const plain = await speech(client, "Try voxroute today.");
    expect(said.byteLength).toBeGreaterThan(16_000);
    expect(Buffer.from(said).equals(Buffer.from(written))).toBe(true);
    expect(Buffer.from(said).equals(Buffer.from(plain))).toBe(false);
  });

  test("billing counts the characters the caller sent, not the expanded text", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const client = sdk(key);
    const made = await client.pronunciationDictionaries.createFromRules({ name: "long", rules: [{ type: "alias", stringToReplace: "TTS", alias: "text to speech synthesis by a machine" }] });
    await speech(client, "TTS works.", [{ pronunciationDictionaryId: made.id, versionId: made.versionId }]);
    expect((await lastActivity(server, tenantId)).usageAmount).toBe("TTS works.".length);
  });

  test("a phoneme rule without an alias for a provider without phonemes: 400 naming the rule and the provider", async () => {
    const { key } = await fundedAccount(server);
    const client = sdk(key);
    const made = await client.pronunciationDictionaries.createFromRules({
      name: "ipa",
      rules: [
        { type: "alias", stringToReplace: "TTS", alias: "text to speech" },
        { type: "phoneme", stringToReplace: "tomato", phoneme: "təˈmɑːtoʊ", alphabet: "ipa" },
      ],
    });
    const err = (await speech(client, "A tomato.", [{ pronunciationDictionaryId: made.id }]).catch((e: unknown) => e)) as ElevenLabsError;
    expect(err.statusCode).toBe(400);
    expect(JSON.stringify(err.body)).toContain("rule 1");
    expect(JSON.stringify(err.body)).toContain("flite");
  });

  test("another tenant's dictionary is not found; a malformed rule is 400", async () => {
    const owner = sdk((await fundedAccount(server)).key);
    const other = sdk((await fundedAccount(server)).key);
    const made = await owner.pronunciationDictionaries.createFromRules({ name: "mine", rules: [{ type: "alias", stringToReplace: "a", alias: "b" }] });
    expect(((await other.pronunciationDictionaries.get(made.id).catch((e: unknown) => e)) as ElevenLabsError).statusCode).toBe(404);
    const bad = await fetch(`${server.url}/el/v1/pronunciation-dictionaries/add-from-rules`, {
      method: "POST",
      headers: { "xi-api-key": (await fundedAccount(server)).key, "content-type": "application/json" },
      body: JSON.stringify({ name: "x", rules: [{ type: "alias", string_to_replace: "a" }] }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { detail: { message: string } }).detail.message).toContain("rules[0].alias");
  });
});

describe.skipIf(!postgresAvailable)("pronunciation dictionaries on PostgreSQL", () => {
  test("the same round trip on the PostgreSQL tables", async () => {
    const pg = await freshPostgres();
    const on = await startTestServer({ DATABASE_URL: pg.url });
    try {
      const client = new ElevenLabsClient({ apiKey: on.key, baseUrl: `${on.url}/el`, maxRetries: 0 });
      const made = await client.pronunciationDictionaries.createFromRules({ name: "pg", rules: [{ type: "alias", stringToReplace: "voxroute", alias: "vox root" }] });
      const added = await client.pronunciationDictionaries.rules.add(made.id, { rules: [{ type: "phoneme", stringToReplace: "tomato", phoneme: "təˈmɑːtoʊ", alphabet: "ipa" }] });
      expect((await client.pronunciationDictionaries.list()).pronunciationDictionaries.map((d) => [d.id, d.latestVersionId, d.latestVersionRulesNum])).toEqual([[made.id, added.versionId, 2]]);
      expect(await new Response(await client.pronunciationDictionaries.download(made.id, made.versionId)).text()).not.toContain("tomato");
    } finally {
      await on.stop(0);
      await pg.drop();
    }
  }, 30_000);
});
