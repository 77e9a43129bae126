import { afterAll, beforeAll, expect, test } from "bun:test";
import { TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { ScriptedTts } from "./fakes/scripted-tts.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// A model with a per-request price, part of whose text the TTS cache played (docs/tts-cache.md):
// the per-request price is billed once, at full price (the request was made); only the cached
// characters' per-character price is at TTS_CACHE_PRICE_FACTOR. So for each part of a failover.

const [one, two] = ["one", "two"].map((id) => new ScriptedTts(id));
let server: TestServer;

beforeAll(async () => {
  const catalogue = testCatalogue(["one", "two"]);
  // "one": 20 credits a character and 1000 a request; the fallback "two": 10 a character, no request price.
  catalogue.providers[0].bindings[0].price = { amount: "0.00002", per: "character", requestPrice: "0.001" };
  server = await startTestServer({ TTS_CACHE_BYTES: String(1024 * 1024), TTS_CACHE_PRICE_FACTOR: "0.25" }, { extra: { catalogue, providers: [one, two] } });
});
afterAll(() => server.stop(0));

const REQUEST = 1000;
const FIRST = "The greeting is cached. ";
const SECOND = "The second is synthesized. ";
const THIRD = "The fallback ends it.";
const [first, second, third] = [FIRST, SECOND, THIRD].map((s) => [...s].length);
const ORDER = `/v1/tts?model=${TEST_MODEL}&provider_order=one,two`;

const get = async (key: string, path: string) => (await fetch(`${server.url}${path}`, { headers: bearer(key) })).json() as Promise<any>;

/** A session on `key` that sends `texts`, each flushed but the last; it ends `tts_complete`. */
async function speak(key: string, texts: string[]): Promise<void> {
  const c = connect(server.wsUrl(ORDER), bearer(key));
  for (const [i, text] of texts.entries()) {
    c.send({ type: "text", text });
    if (i < texts.length - 1) c.send({ type: "flush" });
  }
  c.send({ type: "close" });
  expect((await c.closed).close).toEqual({ code: 1000, reason: "tts_complete" });
}

/** The account's records, newest first, after checking the balance is what they billed. */
async function billed(key: string, initial: number): Promise<any[]> {
  const { items } = await get(key, "/account/activity");
  const balance = await get(key, "/account/balance");
  expect(balance.paid_credits).toBe(initial - items.reduce((n: number, r: { credits: number }) => n + r.credits, 0));
  return items;
}

test("a session of one provider pays the per-request price once, its cached characters at the factor", async () => {
  const INITIAL = 10_000_000;
  const { key } = await fundedAccount(server, INITIAL);
  await speak(key, [FIRST]);
  await speak(key, [FIRST, SECOND]);
  const [session, warm] = await billed(key, INITIAL);
  expect(warm).toMatchObject({ usage_amount: first, credits: REQUEST + first * 20 });
  expect(session).toMatchObject({ provider: "one", usage_amount: first + second, cached_units: first, credits: REQUEST + first * 20 * 0.25 + second * 20 });
});

test("after a failover, the part the cache played some of pays its per-request price once", async () => {
  const INITIAL = 10_000_000;
  const { key } = await fundedAccount(server, INITIAL);
  await speak(key, [FIRST]);
  // "one" plays FIRST from the cache, speaks SECOND to its end, then fails: THIRD goes to "two".
  one.plan.push("die-after-spoken");
  await speak(key, [FIRST, SECOND, THIRD]);
  const [session] = await billed(key, INITIAL);
  const firstPart = REQUEST + first * 20 * 0.25 + second * 20;
  expect(session).toMatchObject({ provider: "two", cached_units: first, credits: firstPart + third * 10 });
  expect(session.parts.map((p: { provider: string; credits: number }) => [p.provider, p.credits])).toEqual([
    ["one", firstPart],
    ["two", third * 10],
  ]);
});
