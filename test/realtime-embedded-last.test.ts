import { afterAll, afterEach, beforeEach, expect, test } from "bun:test";
import type { CatalogueData } from "../src/catalogue/catalogue.ts";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { ScriptedStt, scriptedSttCatalogue } from "./fakes/scripted-stt.ts";
import { ScriptedTts } from "./fakes/scripted-tts.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { callProfile, recordsOf, say, until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, silence, speak } from "./helpers/speech.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// A /v1/realtime call whose chains end in embedded engines (Flite speaks, PocketSphinx hears) goes
// on with no cloud provider left: every cloud candidate's circuit open when the call starts, and
// the cloud providers failing in the middle of the call (their circuits opening then: the next
// answer goes to Flite at once). The cloud providers are the scripted ones; a circuit opens at the
// first failure and stays open for the whole file.

const app = startFakeApp();
const tts = new ScriptedTts("cloud-tts");
const stt = new ScriptedStt("cloud-stt");
let server: TestServer;

function startServer() {
  const catalogue: CatalogueData = testCatalogue(["cloud-tts"]);
  catalogue.providers.push(...scriptedSttCatalogue(["cloud-stt"]).providers);
  const env = { PROVIDER_FAILURE_THRESHOLD: "1", PROVIDER_COOLDOWN_MS: "600000", PROVIDER_COOLDOWN_MAX_MS: "600000" };
  return startTestServer(env, { extra: { catalogue, providers: [tts], sttProviders: [stt] } });
}

beforeEach(async () => {
  server = await startServer();
});
afterEach(() => server.stop(0));
afterAll(() => app.stop());

async function profile(key: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/realtime/profiles`, {
    method: "POST",
    headers: { ...bearer(key), "content-type": "application/json" },
    body: JSON.stringify({
      name: "embedded last",
      pipeline: {
        stt: { model: "pocketsphinx", input: { audio_format: "pcm_16000", provider_order: "cloud-stt,pocketsphinx" } },
        tts: { model: TEST_MODEL, fallbacks: [{ model: "flite", voice: "slt" }] },
        upstream: { url: app.url("/echo") },
      },
    }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

async function healthOf(provider: string, capability: "tts" | "stt") {
  const { providers } = (await (await fetch(`${server.url}/v1/providers`)).json()) as { providers: Record<string, Record<string, { health: { status: string } }[]>> };
  return providers[provider]![capability]![0]!.health.status;
}

const TURN = concat([silence(300), speak("Thank you very much."), silence(900)]);
const answers = (events: Record<string, any>[]) => events.filter((e) => e.type === "realtime.response.audio.started").map((e) => [e.provider, e.voice]);

test.skipIf(!localSttAvailable)(
  "every cloud candidate down when the call starts: Flite and PocketSphinx serve it, the dead providers are not dialled",
  async () => {
    // One failure each opens their circuits.
    tts.plan.push("refuse");
    expect((await connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}`), bearer(server.key)).closed).close.code).toBe(1011);
    stt.plan.push({ dieAfterBytes: 1 });
    const s = connect(server.wsUrl("/v1/stt?model=cmu/pocketsphinx-en-us&audio_format=pcm_16000&provider=cloud-stt"), bearer(server.key));
    await s.opened;
    s.ws.send(new Uint8Array(3200));
    expect((await s.closed).close.code).toBe(1011);
    expect([await healthOf("cloud-tts", "tts"), await healthOf("cloud-stt", "stt")]).toEqual(["down", "down"]);
    const dialled = [tts.given.length, stt.received.length];

    const { key, tenantId } = await fundedAccount(server);
    const c = await callProfile(server, await profile(key), key);
    await say(c, TURN);
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"), 20_000);
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.some((e) => e.type === "realtime.error")).toBe(false);
    expect(answers(rec.events)).toEqual([["flite", "slt"]]);
    expect([tts.given.length, stt.received.length]).toEqual(dialled);
    const sessionId = rec.events[0]!.session_id;
    const [heard] = await recordsOf(server, `${sessionId}.stt`, 1);
    expect(heard).toMatchObject({ tenantId, provider: "pocketsphinx", status: "completed", attempts: "[]" });
    const [answer] = await recordsOf(server, `${sessionId}.resp_1`, 1);
    expect(answer).toMatchObject({ tenantId, provider: "flite", voice: "slt", status: "completed", attempts: "[]" });
  },
  60_000,
);

test.skipIf(!localSttAvailable)(
  "the cloud providers fail mid-call: the embedded engines take over, and the next answer goes to Flite at once",
  async () => {
    const { key } = await fundedAccount(server);
    stt.plan.push({ silent: true, dieAfterBytes: 16_000 });
    tts.plan.push("die-mid-audio");
    const c = await callProfile(server, await profile(key), key);
    await say(c, TURN);
    await until(() => c.rec.events.filter((e) => e.type === "realtime.response.audio.done").length === 1, 20_000);
    expect([await healthOf("cloud-tts", "tts"), await healthOf("cloud-stt", "stt")]).toEqual(["down", "down"]);
    const dialled = [tts.given.length, stt.received.length];
    await say(c, TURN);
    await until(() => c.rec.events.filter((e) => e.type === "realtime.response.audio.done").length === 2, 20_000);
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.some((e) => e.type === "realtime.error")).toBe(false);
    // The first answer began in the cloud voice (its audio went on in Flite's); the second was Flite's from its start.
    expect(answers(rec.events)).toEqual([
      ["cloud-tts", undefined],
      ["flite", "slt"],
    ]);
    expect([tts.given.length, stt.received.length]).toEqual(dialled);
    const sessionId = rec.events[0]!.session_id;
    const [first, second] = [await recordsOf(server, `${sessionId}.resp_1`, 1), await recordsOf(server, `${sessionId}.resp_2`, 1)];
    expect(first[0]).toMatchObject({ provider: "flite", status: "completed" });
    expect(JSON.parse(first[0]!.attempts)).toEqual([{ provider: "cloud-tts", reason: "upstream returned 500" }]);
    expect(second[0]).toMatchObject({ provider: "flite", status: "completed", attempts: "[]" });
  },
  60_000,
);
