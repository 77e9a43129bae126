import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { transcribe } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect, type Recording } from "./helpers/ws-client.ts";

// Pronunciation dictionaries on the native API: made on /v1/pronunciation-dictionaries, named by
// `pronunciation_dictionaries` on /v1/tts. The router applies alias rules to the utterances it
// cuts, so a word split across text frames is still matched; billing counts the caller's text.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

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
});
