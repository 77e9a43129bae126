import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { VoiceEntry } from "../src/voices/voice-entry.ts";
import { popularityScore } from "../src/voices/voice-metrics.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// The voices' metrics come from this deployment's own activity records, on SQLite and on
// PostgreSQL: TTS requests that name a voice are counted in the background and `popular` follows
// them; clone counts come through the catalogue's hook; first sightings survive a restart.

const SENTENCE = "The quick brown fox jumps over the lazy dog. ";

/** A server once every provider's first voice list is in (a refresh under way is shared). */
async function listed(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer(env);
  await server.ctx.voices.refresh();
  return server;
}

function suite(name: string, databaseUrl: () => Promise<{ url: string; drop?: () => Promise<void> }>, skip: boolean) {
  describe.skipIf(skip)(`voice metrics on ${name}`, () => {
    let server: TestServer;
    let url: string;
    let drop: (() => Promise<void>) | undefined;

    beforeAll(async () => {
      ({ url, drop } = await databaseUrl());
      server = await listed({ DATABASE_URL: url, ESPEAK_ENABLED: "false", VOICE_METRICS_REFRESH_MS: "150", VOICE_CATALOGUE_REFRESH_MS: "3600000" });
    });
    afterAll(async () => {
      await server?.stop(0);
      await drop?.();
    });

    const popular = async (): Promise<VoiceEntry[]> => {
      const res = await fetch(`${server.url}/v1/voices?model=cmu/flite&sort=popular`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { voices: VoiceEntry[] }).voices;
    };

    /** `popular` once `ready` holds of it (the metrics refresh in the background), within a few seconds. */
    async function popularOnce(ready: (list: VoiceEntry[]) => boolean): Promise<VoiceEntry[]> {
      for (let i = 0; i < 60; i++) {
        const list = await popular();
        if (ready(list)) return list;
        await Bun.sleep(100);
      }
      throw new Error("the metrics never came");
    }

    async function speak(voice: string | undefined, text: string): Promise<void> {
      const c = connect(server.wsUrl(`/v1/tts?model=flite${voice ? `&voice=${voice}` : ""}`), bearer(server.key));
      c.send({ type: "text", text });
      c.send({ type: "close" });
      expect((await c.closed).close.code).toBe(1000);
    }

    test("a few TTS requests change the popular order; each voice's uses and characters are counted", async () => {
      const before = (await popular()).map((e) => e.voice.id);
      expect(before).toEqual(["slt", "kal16", "rms", "awb", "kal"]); // no use yet: the featured order
      const rms = SENTENCE.repeat(3);
      await speak("rms", rms);
      await speak("rms", rms);
      await speak("awb", SENTENCE);
      await speak(undefined, SENTENCE.repeat(5)); // names no voice: counted for none
      const after = await popularOnce((list) => list[0].voice.id === "rms" && list[1].voice.id === "awb");
      expect(after.map((e) => e.voice.id)).toEqual(["rms", "awb", "slt", "kal16", "kal"]);
      const chars = 2 * rms.length;
      expect(after[0].providers[0].metrics).toEqual({
        popularity_score: popularityScore(chars, chars, 0),
        likes: 0,
        saves: 0,
        shares: 0,
        uses: 2,
        characters_7d: chars,
        characters_1y: chars,
        clones: 0,
      });
      expect(after[1].providers[0].metrics).toMatchObject({ uses: 1, characters_7d: SENTENCE.length });
      expect(after.find((e) => e.voice.id === "kal")!.providers[0].metrics.uses).toBe(0);
      // The activity records name the voice (none for the request that named none).
      const { items } = (await (await fetch(`${server.url}/account/activity?capability=tts`, { headers: bearer(server.key) })).json()) as { items: { voice?: string }[] };
      expect(items.map((i) => i.voice ?? null).sort()).toEqual(["awb", "rms", "rms", null].sort());
    }, 60_000);

    test("a popular cursor is good while the metrics stay; after they change it answers catalogue_changed", async () => {
      const first = (await (await fetch(`${server.url}/v1/voices?model=cmu/flite&sort=popular&limit=2`)).json()) as { next_cursor: string };
      const byName = (await (await fetch(`${server.url}/v1/voices?model=cmu/flite&sort=name&limit=2`)).json()) as { next_cursor: string };
      expect((await fetch(`${server.url}/v1/voices?model=cmu/flite&sort=popular&limit=2&cursor=${first.next_cursor}`)).status).toBe(200);
      await speak("kal16", SENTENCE.repeat(20));
      await popularOnce((list) => list[0].voice.id === "kal16");
      const stale = await fetch(`${server.url}/v1/voices?model=cmu/flite&sort=popular&limit=2&cursor=${first.next_cursor}`);
      expect(stale.status).toBe(409);
      expect(await stale.json()).toMatchObject({ error: "catalogue_changed" });
      expect((await fetch(`${server.url}/v1/voices?model=cmu/flite&sort=name&limit=2&cursor=${byName.next_cursor}`)).status).toBe(200);
    }, 60_000);

    test("clone counts come through the catalogue's hook", async () => {
      server.ctx.voices.countClones(async () => [{ provider: "flite", voice: "kal", clones: 1000 }]);
      const list = await popularOnce((l) => l[0].voice.id === "kal");
      expect(list[0].providers[0].metrics).toMatchObject({ clones: 1000, uses: 0, popularity_score: popularityScore(0, 0, 1000) });
      server.ctx.voices.countClones(async () => []);
      await popularOnce((l) => l[0].voice.id !== "kal");
    }, 60_000);

    test("first sightings survive a restart; last sightings move on", async () => {
      const slt = async (s: TestServer) => {
        const res = await fetch(`${s.url}/v1/voices?model=cmu/flite&q=slt`);
        return ((await res.json()) as { voices: VoiceEntry[] }).voices[0].voice;
      };
      const before = await slt(server);
      await server.stop(0);
      await Bun.sleep(20);
      server = await listed({ DATABASE_URL: url, ESPEAK_ENABLED: "false", VOICE_METRICS_REFRESH_MS: "150" });
      const after = await slt(server);
      expect(after.first_seen_at).toBe(before.first_seen_at);
      expect(Date.parse(after.last_seen_at)).toBeGreaterThan(Date.parse(before.last_seen_at));
      // And the figures are read again from the records by the new process.
      expect((await popular())[0].providers[0].metrics.uses).toBeGreaterThan(0);
    }, 60_000);
  });
}

suite("SQLite", async () => ({ url: `sqlite://${join(tempDir("voxroute-voices-"), "db.sqlite")}` }), false);
suite("PostgreSQL", freshPostgres, !postgresAvailable);
