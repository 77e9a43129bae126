import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { ScriptedTts } from "./fakes/scripted-tts.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { speakOnce } from "./helpers/http-tts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect, type Client } from "./helpers/ws-client.ts";

// A TTS session's mid-session failover at forged moments, against in-process providers that fail
// on cue (fakes/scripted-tts.ts): at an utterance's end, right after a flush was answered, in the
// replay itself, every fallback in turn; a client leaving and a balance running out while the
// replay is under way; and the health of a half-open provider reached as a fallback mid-session.

const IDS = ["one", "two", "three", "four", "five", "six"];
// Asked for MP3, "two" speaks it at 22.05 kHz, the others at 24 kHz.
const providers = IDS.map((id) => new ScriptedTts(id, 5, id === "two" ? 22050 : 24000));
const [one, two] = providers;
const query = (...ids: string[]) => `model=${TEST_MODEL}&provider_order=${ids.join(",")}`;
const order = (...ids: string[]) => `/v1/tts?${query(...ids)}`;

async function until(done: () => boolean): Promise<void> {
  while (!done()) await Bun.sleep(5);
}

const statuses = (c: Client) => c.rec.events.filter((e) => e.type === "service.tts_provider_status").map((e) => `${e.provider}:${e.status}`);

describe("forged timing (circuits off)", () => {
  let server: TestServer;
  beforeAll(async () => {
    const catalogue = testCatalogue(IDS);
    for (const p of catalogue.providers) p.bindings[0].formats = ["pcm", "mp3"];
    // Each provider also serves a model of its own ("test/<id>"): a chain of six models, one provider each.
    for (const id of IDS) {
      const provider = catalogue.providers.find((p) => p.id === id)!;
      provider.bindings.push({ ...provider.bindings[0], id: "own", canonical: `test/${id}` });
      catalogue.models.push({ canonical: `test/${id}`, name: `Test ${id}`, capability: "tts", aliases: [] });
    }
    server = await startTestServer({}, { extra: { catalogue, providers } });
  });
  afterAll(() => server.stop(0));

  const FIRST = "First sentence. ";
  const SECOND = "Second one here. ";
  const THIRD = "And the last.";
  const chars = (s: string) => [...s].length;

  test("dies right after its first utterance was spoken to its end (no flush): the next one starts at the second, 1000, each character billed once", async () => {
    const { key, tenantId } = await fundedAccount(server);
    one.plan.push("die-after-spoken");
    const c = connect(server.wsUrl(order("one", "two")), bearer(key));
    c.send({ type: "text", text: FIRST });
    c.send({ type: "flush" });
    c.send({ type: "text", text: SECOND + THIRD });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(two.given.at(-1)).toBe(SECOND + THIRD);
    // A `/v1/tts` stream is bulk for the engines' lanes, its replay too (docs/routing.md).
    expect(two.interactive.at(-1)).toBe(false);
    // The flush the first never answered is answered once, by the second.
    expect(rec.events.filter((e) => e.type === "service.tts_flushed").length).toBe(1);
    const record = await lastActivity(server, tenantId);
    expect(record).toMatchObject({ status: "completed", usageAmount: chars(FIRST + SECOND + THIRD), credits: chars(FIRST + SECOND + THIRD) * 10 });
    expect(JSON.parse(record.parts!).map((p: { provider: string; units: number }) => [p.provider, p.units])).toEqual([
      ["one", chars(FIRST)],
      ["two", chars(SECOND + THIRD)],
    ]);
  });

  test("dies right after answering a flush: that flush is not answered again, the text before it not replayed", async () => {
    const { key, tenantId } = await fundedAccount(server);
    one.plan.push("die-after-flushed");
    const c = connect(server.wsUrl(order("one", "two")), bearer(key));
    c.send({ type: "text", text: FIRST });
    c.send({ type: "flush" });
    c.send({ type: "text", text: SECOND });
    c.send({ type: "flush" });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(rec.events.filter((e) => e.type === "service.tts_flushed").length).toBe(2);
    expect(two.given.at(-1)).toBe(SECOND);
    const record = await lastActivity(server, tenantId);
    expect(record).toMatchObject({ usageAmount: chars(FIRST + SECOND), credits: chars(FIRST + SECOND) * 10 });
  });

  test("the replay's provider dies too, and the next, and every fallback: five fallback models tried once each, 1011 once, every attempt listed", async () => {
    const { key, tenantId } = await fundedAccount(server);
    for (const p of providers) p.plan.push("die-mid-audio");
    const opened = providers.map((p) => p.given.length);
    const fallbacks = encodeURIComponent(JSON.stringify(IDS.slice(1).map((id) => ({ model: `test/${id}` }))));
    const c = connect(server.wsUrl(`/v1/tts?model=test/one&fallbacks=${fallbacks}`), bearer(key));
    c.send({ type: "text", text: FIRST + SECOND });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(providers.map((p, i) => p.given.length - opened[i])).toEqual([1, 1, 1, 1, 1, 1]);
    // Each was given the whole text again: none of them spoke an utterance to its end.
    for (const p of providers) expect(p.given.at(-1)).toBe(FIRST + SECOND);
    expect(rec.events.filter((e) => e.type === "service.tts_error")).toHaveLength(1);
    expect(statuses(c).filter((s) => s.endsWith(":failed"))).toEqual(IDS.map((id) => `${id}:failed`));
    const record = await lastActivity(server, tenantId);
    expect(record).toMatchObject({ status: "failed", usageAmount: 0, credits: 0 });
    expect(JSON.parse(record.attempts).map((a: { provider: string }) => a.provider)).toEqual(IDS);
    expect(await server.ctx.meter.ledger.snapshot(tenantId)).toMatchObject({ balance: { paidHeld: 0 } });
  });

  /** "one" dies at the end of FIRST's utterance; SECOND comes; "two" is opening for the replay and held there until `open`. */
  async function replayHeld(key: string) {
    one.plan.push("die-after-spoken");
    const held = Promise.withResolvers<void>();
    two.gate = held.promise;
    const connecting = two.nextOpen();
    const c = connect(server.wsUrl(order("one", "two")), bearer(key));
    c.send({ type: "text", text: FIRST });
    c.send({ type: "flush" });
    c.send({ type: "text", text: SECOND });
    await connecting;
    const open = () => {
      two.gate = undefined;
      held.resolve();
    };
    return { c, open };
  }

  test("the client leaves while the replay's provider is connecting: the session ends once, billed for what it was given, nothing held", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const { c, open } = await replayHeld(key);
    c.ws.close();
    await c.closed;
    const record = await lastActivity(server, tenantId);
    open();
    expect(record).toMatchObject({ outcome: "client_left", usageAmount: chars(FIRST), credits: chars(FIRST) * 10 });
    expect(await server.ctx.meter.ledger.snapshot(tenantId)).toMatchObject({ balance: { paidHeld: 0 } });
  });

  test("the balance runs out while the replay's provider is connecting: what was admitted is spoken, 4402 once, billed once", async () => {
    // 40 characters and the carry allowance: FIRST + SECOND (33) are admitted, THIRD (13) is not.
    const { key, tenantId } = await fundedAccount(server, 405);
    const { c, open } = await replayHeld(key);
    c.send({ type: "text", text: THIRD });
    c.send({ type: "close" });
    // The replay is held until the client's last frames are in (the outcome is the same either way).
    await Bun.sleep(50);
    open();
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "insufficient_balance" }) });
    expect(rec.events.filter((e) => e.type === "service.tts_error")).toHaveLength(1);
    expect(two.given.at(-1)).toBe(SECOND);
    const record = await lastActivity(server, tenantId);
    expect(record).toMatchObject({ status: "completed", usageAmount: chars(FIRST + SECOND), credits: chars(FIRST + SECOND) * 10 });
    expect(await server.ctx.meter.ledger.snapshot(tenantId)).toMatchObject({ balance: { paidCredits: 405 - chars(FIRST + SECOND) * 10, paidHeld: 0 } });
  });

  test("format=mp3: a next candidate whose MP3 cannot continue the stream (another rate) is skipped for the one after, and that is no failure of its health", async () => {
    const failuresOf = async (provider: string) => {
      const { providers: all } = (await (await fetch(`${server.url}/v1/providers`)).json()) as { providers: Record<string, { tts: { health: { consecutive_failures: number } }[] }> };
      return all[provider].tts[0].health.consecutive_failures;
    };
    const before = await failuresOf("two");
    one.plan.push("die-mid-audio");
    const c = connect(server.wsUrl(`${order("one", "two", "three")}&format=mp3`), bearer(server.key));
    c.send({ type: "text", text: FIRST });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(statuses(c).filter((s) => s.endsWith(":failed"))).toEqual(["one:failed", "two:failed"]);
    expect(await failuresOf("two")).toBe(before);
  });
});

describe("health of a half-open provider reached mid-session", () => {
  let server: TestServer;
  beforeAll(async () => {
    const env = { PROVIDER_FAILURE_THRESHOLD: "3", PROVIDER_COOLDOWN_MS: "300", PROVIDER_COOLDOWN_MAX_MS: "1200" };
    server = await startTestServer(env, { extra: { catalogue: testCatalogue(IDS), providers } });
  });
  afterAll(() => server.stop(0));

  async function healthOf(provider: string) {
    const { providers: all } = (await (await fetch(`${server.url}/v1/providers`)).json()) as { providers: Record<string, { tts: { health: { status: string } }[] }> };
    return all[provider].tts[0].health.status;
  }
  const servedBy = (events: Record<string, any>[]) => events.find((e) => e.type === "service.tts_audio_started")?.provider;

  test("its first audio as the fallback closes its circuit (up), and the sessions that come next are not kept off it", async () => {
    two.plan.push("refuse", "refuse", "refuse");
    for (let i = 0; i < 3; i++) expect(servedBy((await speakOnce(server, query("two", "three"), "Hi there")).events)).toBe("three");
    expect(await healthOf("two")).toBe("down");
    while ((await healthOf("two")) === "down") await Bun.sleep(20);

    one.plan.push("die-after-spoken");
    const c = connect(server.wsUrl(order("one", "two")), bearer(server.key));
    c.send({ type: "text", text: "The first one. " });
    c.send({ type: "flush" });
    c.send({ type: "text", text: "The second one." });
    c.send({ type: "flush" });
    // The second provider answered both flushes (the first never answered its own): its audio went out.
    await until(() => c.rec.events.filter((e) => e.type === "service.tts_flushed").length === 2);
    expect(statuses(c)).toEqual(["one:failed", "two:connecting", "two:connected"]); // the first attempt is told by `ready` (tts-websocket.md)
    expect(await healthOf("two")).toBe("up");
    // While that session is still open, others use the provider (no probe keeps them off it).
    const others = await Promise.all([speakOnce(server, query("two", "three"), "Hi there"), speakOnce(server, query("two", "three"), "Hi there")]);
    expect(others.map((rec) => servedBy(rec.events))).toEqual(["two", "two"]);
    c.send({ type: "close" });
    expect((await c.closed).close).toEqual({ code: 1000, reason: "tts_complete" });
    expect(await healthOf("two")).toBe("up");
  });
});
