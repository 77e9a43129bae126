import { afterAll, beforeAll, expect, test } from "bun:test";
import { TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { ScriptedTts } from "./fakes/scripted-tts.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// A TTS session whose first provider played part of its text from the cache (docs/tts-cache.md),
// then failed in the middle of the session: billed in parts, the first part's cached characters
// at the model's price times TTS_CACHE_PRICE_FACTOR, as a session of one part is.

const [one, two] = ["one", "two"].map((id) => new ScriptedTts(id));
let server: TestServer;

beforeAll(async () => {
  const catalogue = testCatalogue(["one", "two"]);
  // The first provider is dearer (20 credits a character; the fallback 10): each part at its own rate.
  catalogue.providers[0].bindings[0].price = { amount: "0.00002", per: "character" };
  server = await startTestServer({ TTS_CACHE_BYTES: String(1024 * 1024), TTS_CACHE_PRICE_FACTOR: "0.25" }, { extra: { catalogue, providers: [one, two] } });
});
afterAll(() => server.stop(0));

const FIRST = "The greeting is cached. ";
const SECOND = "The second is synthesized. ";
const THIRD = "The fallback ends it.";
const chars = (s: string) => [...s].length;
const ORDER = `/v1/tts?model=${TEST_MODEL}&provider_order=one,two`;

const get = async (key: string, path: string) => (await fetch(`${server.url}${path}`, { headers: bearer(key) })).json() as Promise<any>;

test("the first provider's part bills its cached characters at the price factor, the fallback's its own at full rate", async () => {
  const INITIAL = 10_000_000;
  const { key } = await fundedAccount(server, INITIAL);
  const warm = connect(server.wsUrl(ORDER), bearer(key));
  warm.send({ type: "text", text: FIRST });
  warm.send({ type: "close" });
  expect((await warm.closed).close.code).toBe(1000);

  // "one" plays FIRST from the cache, speaks SECOND to its end, then fails: THIRD goes to "two".
  one.plan.push("die-after-spoken");
  const c = connect(server.wsUrl(ORDER), bearer(key));
  c.send({ type: "text", text: FIRST });
  c.send({ type: "flush" });
  c.send({ type: "text", text: SECOND });
  c.send({ type: "flush" });
  c.send({ type: "text", text: THIRD });
  c.send({ type: "close" });
  expect((await c.closed).close).toEqual({ code: 1000, reason: "tts_complete" });
  // FIRST never reached "one" again (the cache played it); THIRD was replayed to "two".
  expect(one.given.at(-1)!.startsWith(SECOND)).toBe(true);
  expect(two.given.at(-1)).toBe(THIRD);

  const [first, second, third] = [FIRST, SECOND, THIRD].map(chars);
  const { items } = await get(key, "/account/activity");
  expect(items).toHaveLength(2);
  const [failedOver, warmed] = items;
  expect(warmed).toMatchObject({ usage_amount: first, credits: first * 20 });
  const firstPart = first * 20 * 0.25 + second * 20;
  expect(failedOver).toMatchObject({ status: "completed", provider: "two", usage_amount: first + second + third, cached_units: first, credits: firstPart + third * 10 });
  expect(failedOver.parts.map((p: { provider: string; units: number; credits: number; cached_units?: number }) => [p.provider, p.units, p.credits, p.cached_units])).toEqual([
    ["one", first + second, firstPart, first],
    ["two", third, third * 10, undefined],
  ]);
  const balance = await get(key, "/account/balance");
  expect([balance.paid_credits, balance.spendable_paid_credits]).toEqual([INITIAL - warmed.credits - failedOver.credits, INITIAL - warmed.credits - failedOver.credits]);
});
