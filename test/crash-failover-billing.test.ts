import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { TEST_MODEL } from "./fakes/fixed-pcm-provider.ts";
import { secondsOfSpeech } from "./fakes/scripted-stt.ts";
import { accountIn } from "./helpers/accounts.ts";
import { killServer, spawnServer, type ServerProcess } from "./helpers/process.ts";
import { until } from "./helpers/realtime.ts";
import { tempDir } from "./helpers/temp-dirs.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// A server killed with SIGKILL after a session switched provider in its middle (SQLite, the
// server in its own process): the restarted server settles the orphaned hold in parts, each part
// once at its own binding's rate (the failing providers are the dearer), nothing twice and nothing lost. The providers are the scripted
// ones (fakes/scripted-tts.ts, fakes/scripted-stt.ts), failing on cue in the killed process.

const INITIAL = 10_000_000;
const running: ServerProcess[] = [];
afterAll(() => {
  for (const s of running) s.proc.kill("SIGKILL");
});

async function start(databaseUrl: string, plan: Record<string, unknown[]> = {}, env: Record<string, string> = {}): Promise<ServerProcess> {
  // A short hold lifetime: the restarted server finds the dead session's hold lapsed soon.
  const server = await spawnServer({ DATABASE_URL: databaseUrl, TTS_WORKERS: "1", AUDIO_WORKERS: "1", HOLD_TTL_MS: "3000", SCRIPTED_PLAN: JSON.stringify(plan), ...env });
  running.push(server);
  return server;
}

const get = async (server: ServerProcess, key: string, path: string) => (await fetch(`${server.url}${path}`, { headers: bearer(key) })).json() as Promise<any>;

/** The account's activity once the restarted server has settled the dead session, its `count`th record (bounded wait), and its books. */
async function recovered(server: ServerProcess, key: string, count = 1) {
  for (let i = 0; i < 150; i++) {
    const { items } = await get(server, key, "/account/activity");
    if (items.length >= count) {
      const balance = await get(server, key, "/account/balance");
      return { items, paid: balance.paid_credits, held: balance.paid_credits - balance.spendable_paid_credits };
    }
    await Bun.sleep(100);
  }
  throw new Error("the interrupted session was never settled");
}

/** Long enough for a noted checkpoint to be written to the hold (hold-keeper.ts writes within 200 ms). */
const CHECKPOINT_WRITTEN_MS = 600;

test("TTS: killed after the switch, the recovered hold bills the failed provider's part and the fallback's, each once", async () => {
  const url = `sqlite://${join(tempDir("crash-failover-"), "db.sqlite")}`;
  const key = await accountIn(url, INITIAL);
  const server = await start(url, { "tts-one": ["die-after-spoken"] });
  const FIRST = "The first sentence. ";
  const SECOND = "The second sentence.";
  const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&provider_order=tts-one,tts-two`), bearer(key));
  c.send({ type: "text", text: FIRST });
  c.send({ type: "flush" });
  c.send({ type: "text", text: SECOND });
  c.send({ type: "flush" });
  await until(() => c.rec.events.filter((e) => e.type === "service.tts_flushed").length === 2);
  await Bun.sleep(CHECKPOINT_WRITTEN_MS);
  await killServer(server);

  const restarted = await start(url);
  const { items, paid, held } = await recovered(restarted, key);
  const [first, second] = [[...FIRST].length, [...SECOND].length];
  expect(items).toHaveLength(1);
  const credits = first * 20 + second * 10;
  expect(items[0]).toMatchObject({ status: "interrupted", provider: "tts-two", usage_amount: first + second, credits });
  expect(items[0].parts.map((p: { provider: string; units: number; credits: number }) => [p.provider, p.units, p.credits])).toEqual([
    ["tts-one", first, first * 20],
    ["tts-two", second, second * 10],
  ]);
  expect([paid, held]).toEqual([INITIAL - credits, 0]);
  await killServer(restarted);
}, 60_000);

test("TTS with the cache: killed after the switch, the recovered hold bills the failed provider's cached characters at the price factor", async () => {
  const url = `sqlite://${join(tempDir("crash-failover-"), "db.sqlite")}`;
  const key = await accountIn(url, INITIAL);
  // The first session keeps FIRST in the cache; in the second, tts-one plays it from there, speaks SECOND, and dies.
  const server = await start(url, { "tts-one": ["serve", "die-after-spoken"] }, { TTS_CACHE_BYTES: String(1024 * 1024), TTS_CACHE_PRICE_FACTOR: "0.25" });
  const [FIRST, SECOND, THIRD] = ["The first sentence. ", "The second sentence. ", "The third sentence."];
  const order = `/v1/tts?model=${TEST_MODEL}&provider_order=tts-one,tts-two`;
  const warm = connect(server.wsUrl(order), bearer(key));
  warm.send({ type: "text", text: FIRST });
  warm.send({ type: "close" });
  await warm.closed;
  const c = connect(server.wsUrl(order), bearer(key));
  for (const text of [FIRST, SECOND, THIRD]) {
    c.send({ type: "text", text });
    c.send({ type: "flush" });
  }
  await until(() => c.rec.events.filter((e) => e.type === "service.tts_flushed").length === 3);
  await Bun.sleep(CHECKPOINT_WRITTEN_MS);
  await killServer(server);

  const restarted = await start(url);
  const { items, paid, held } = await recovered(restarted, key, 2);
  const [first, second, third] = [FIRST, SECOND, THIRD].map((s) => [...s].length);
  const firstPart = first * 20 * 0.25 + second * 20;
  expect(items[0]).toMatchObject({ status: "interrupted", provider: "tts-two", usage_amount: first + second + third, cached_units: first, credits: firstPart + third * 10 });
  expect(items[0].parts.map((p: { provider: string; units: number; credits: number; cached_units?: number }) => [p.provider, p.units, p.credits, p.cached_units])).toEqual([
    ["tts-one", first + second, firstPart, first],
    ["tts-two", third, third * 10, undefined],
  ]);
  expect([paid, held]).toEqual([INITIAL - first * 20 - items[0].credits, 0]);
  await killServer(restarted);
}, 60_000);

test("STT: killed after the switch, before more audio came, the recovered hold bills all the audio received, in parts", async () => {
  const url = `sqlite://${join(tempDir("crash-failover-"), "db.sqlite")}`;
  const key = await accountIn(url, INITIAL);
  const server = await start(url, { "stt-one": [{ dieAfterFinal: 2 }] });
  const c = connect(server.wsUrl("/v1/stt?model=cmu/pocketsphinx-en-us&audio_format=pcm_16000&provider_order=stt-one,stt-two"), bearer(key));
  await c.opened;
  const audio = secondsOfSpeech(5);
  for (let at = 0; at < audio.byteLength; at += 3200) c.ws.send(audio.subarray(at, at + 3200));
  // The fallback has transcribed every second the client sent: the switch is over.
  await until(() => c.rec.events.filter((e) => e.type === "stt.transcript.final").length === 5);
  await Bun.sleep(CHECKPOINT_WRITTEN_MS);
  await killServer(server);

  const restarted = await start(url);
  const { items, paid, held } = await recovered(restarted, key);
  expect(items).toHaveLength(1);
  expect(items[0]).toMatchObject({ status: "interrupted", provider: "stt-two", usage_amount: 5, credits: 2 * 20 + 3 * 10 });
  expect(items[0].parts.map((p: { provider: string; units: number; credits: number }) => [p.provider, p.units, p.credits])).toEqual([
    ["stt-one", 2, 40],
    ["stt-two", 3, 30],
  ]);
  expect([paid, held]).toEqual([INITIAL - 70, 0]);
  await killServer(restarted);
}, 60_000);
