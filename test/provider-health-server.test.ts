import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OpenAiTts } from "../src/providers/openai/tts.ts";
import { startFakeDeepgram, type FakeDeepgram } from "./fakes/deepgram.ts";
import { BrokenProvider, FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi, type FakeOpenAi } from "./fakes/openai.ts";
import { deepgramAt, openAiAt } from "./fakes/server-env.ts";
import { lastActivity, fundedAccount } from "./helpers/accounts.ts";
import { speakOnce, startSpeaking } from "./helpers/http-tts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { speak, wavFile } from "./helpers/speech.ts";
import type { Answer } from "./helpers/documented-answer.ts";
import { upgradeRequest } from "./helpers/upgrade-request.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// Provider health in a running server, against provider fakes broken and healed while it runs
// (the rules themselves: provider-health.test.ts). A provider known to be down costs new sessions
// nothing: they skip it (the fake hears nothing of them), or, when it was their only candidate, are
// refused at once with provider_unavailable. Two servers: one whose circuits stay open for the
// whole file (60 s), one whose cooldowns are short enough to be waited out.

let fake: FakeOpenAi;
let dg: FakeDeepgram;
let steady: TestServer;
let brief: TestServer;

/** A server where `oai-echo` (the OpenAI adapter on the fake) serves the test model before `fixed`, and `rejecting` refuses every voice. */
function startHealthServer(cooldownMs: number, cooldownMaxMs: number): Promise<TestServer> {
  const echo = new OpenAiTts({ apiKey: FAKE_OPENAI_KEY, baseUrl: fake.url, connectTimeoutMs: 10_000, idleTimeoutMs: 10_000 }, "oai-echo");
  const catalogue = testCatalogue(["oai-echo", "fixed", "rejecting"]);
  catalogue.providers[0].requiresVoice = true;
  const env = { PROVIDER_FAILURE_THRESHOLD: "3", PROVIDER_COOLDOWN_MS: String(cooldownMs), PROVIDER_COOLDOWN_MAX_MS: String(cooldownMaxMs) };
  return startTestServer(
    { ...openAiAt(fake), ...deepgramAt(dg), ...env },
    { extra: { catalogue, providers: [echo, new FixedPcmProvider("fixed", 3), new BrokenProvider("rejecting", "reject-voice")] } },
  );
}

beforeAll(async () => {
  fake = startFakeOpenAi();
  dg = startFakeDeepgram();
  steady = await startHealthServer(60_000, 60_000);
  brief = await startHealthServer(300, 1200);
});
afterAll(async () => {
  await steady.stop(0);
  await brief.stop(0);
  fake.stop();
  dg.stop();
});

async function healthOf(server: TestServer, provider: string, capability: "tts" | "stt", id: string) {
  const { providers } = (await (await fetch(`${server.url}/v1/providers`)).json()) as { providers: Record<string, Record<string, { id: string; health: Record<string, any> }[]>> };
  return providers[provider][capability].find((m) => m.id === id)!.health;
}

async function providerUp(server: TestServer, provider: string, model: string): Promise<number | undefined> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("voxroute_provider_up{") && l.includes(`provider="${provider}"`) && l.includes(`model="${model}"`));
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

/** Waits (on the answers of /v1/providers) until the binding's cooldown is over. */
async function cooledDown(server: TestServer, provider: string, id: string): Promise<void> {
  while ((await healthOf(server, provider, "tts", id)).status === "down") await Bun.sleep(20);
}

async function until(done: () => boolean): Promise<void> {
  while (!done()) await Bun.sleep(5);
}

/** 503 `provider_unavailable`, native envelope, with the seconds to wait. */
async function expectUnavailable(answer: Promise<Answer> | Answer | Response): Promise<void> {
  const res = await answer;
  const body = res instanceof Response ? await res.json() : JSON.parse(new TextDecoder().decode(res.body));
  expect({ status: res.status, error: body.error, waits: Number(res.headers.get("retry-after")) > 0 && body.retry_after > 0 }).toEqual({ status: 503, error: "provider_unavailable", waits: true });
}

const ECHO = `model=${TEST_MODEL}&voice=alloy&provider_order=oai-echo,fixed`;
const servedBy = (rec: { events: Record<string, any>[] }) => rec.events.find((e) => e.type === "service.tts_audio_started")?.provider;
/** The providers a session tried, in order: those told `failed` or `connecting` (a first attempt that connects is told by neither), then the one that served. */
const tried = (rec: { events: Record<string, any>[] }) => [
  ...new Set([...rec.events.filter((e) => e.type === "service.tts_provider_status" && e.status !== "connected").map((e) => e.provider), ...[servedBy(rec)].filter(Boolean)]),
];

describe("a circuit that opens", () => {
  test("three provider failures open it: the next session is served by the second candidate, and the hanging provider hears nothing of it", async () => {
    await fake.faults.set({ kind: "status500" });
    const statuses: string[] = [];
    for (let i = 0; i < 3; i++) {
      const rec = await speakOnce(steady, ECHO, "Twelve chars");
      expect([rec.close.code, servedBy(rec)]).toEqual([1000, "fixed"]);
      statuses.push((await healthOf(steady, "oai-echo", "tts", "echo")).status);
    }
    expect(statuses).toEqual(["degraded", "degraded", "down"]);
    const health = await healthOf(steady, "oai-echo", "tts", "echo");
    expect(health).toMatchObject({ consecutive_failures: 3, cooldown_ms: 60_000, last_failure: { reason: expect.stringContaining("500") } });
    expect(Date.parse(health.retry_at)).toBeGreaterThan(Date.now());
    expect(await providerUp(steady, "oai-echo", TEST_MODEL)).toBe(0);
    expect(await providerUp(steady, "fixed", TEST_MODEL)).toBe(1);

    await fake.faults.set({ kind: "hang" });
    const heard = fake.faults.arrivals;
    const { key, tenantId } = await fundedAccount(steady);
    const rec = await speakOnce(steady, ECHO, "Twelve chars", key);
    expect([rec.close.code, servedBy(rec), tried(rec)]).toEqual([1000, "fixed", ["fixed"]]);
    expect(fake.faults.arrivals).toBe(heard);
    expect(await lastActivity(steady, tenantId)).toMatchObject({ provider: "fixed", status: "completed", attempts: "[]" });
    await fake.faults.set(undefined);
  });

  test("health is per binding; with every candidate down a session is refused at once: 503 with Retry-After, before a socket's upgrade", async () => {
    await fake.faults.set({ kind: "status500" });
    for (let i = 0; i < 3; i++) expect((await speakOnce(steady, "model=tts-1&voice=alloy", "Hello")).close).toEqual({ code: 1011, reason: "upstream_error" });
    expect((await healthOf(steady, "openai", "tts", "tts-1")).status).toBe("down");
    expect((await healthOf(steady, "openai", "tts", "tts-1-hd")).status).toBe("up");

    await fake.faults.set({ kind: "hang" });
    const heard = fake.faults.arrivals;
    await expectUnavailable(upgradeRequest(steady.wsUrl("/v1/tts?model=tts-1&voice=alloy"), bearer(steady.key)));
    const res = await fetch(`${steady.url}/oai/audio/speech`, {
      method: "POST",
      headers: { ...bearer(steady.key), "content-type": "application/json" },
      body: JSON.stringify({ model: "tts-1", voice: "alloy", input: "Hello", response_format: "pcm" }),
    });
    expect([res.status, Number(res.headers.get("retry-after")) > 0]).toEqual([503, true]);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("provider_unavailable");
    expect(fake.faults.arrivals).toBe(heard);

    await fake.faults.set(undefined);
    const rec = await speakOnce(steady, "model=tts-1-hd&voice=alloy", "The other model");
    expect([rec.close.code, servedBy(rec)]).toEqual([1000, "openai"]);
    expect(fake.speech.at(-1)!.body.model).toBe("tts-1-hd");
  });

  test("a client's mistake (a voice the provider refuses) does not count against it", async () => {
    for (let i = 0; i < 4; i++) expect((await speakOnce(steady, `model=${TEST_MODEL}&voice=nobody&provider=rejecting`, "Hi")).close.code).toBe(1008);
    expect(await healthOf(steady, "rejecting", "tts", "echo")).toMatchObject({ status: "up", consecutive_failures: 0 });
  });

  test("streaming STT, the passthrough and file transcription use health at their start: refused at once (503), the refused provider not dialled", async () => {
    await dg.faults.set({ kind: "refuse" });
    const stt = (query = "") => connect(steady.wsUrl(`/v1/stt?model=nova-3&audio_format=pcm_16000${query}`), bearer(steady.key)).closed;
    for (let i = 0; i < 3; i++) expect((await stt()).close).toEqual({ code: 1011, reason: "upstream_error" });
    expect((await healthOf(steady, "deepgram", "stt", "nova-3")).status).toBe("down");

    const dialled = dg.faults.arrivals;
    await expectUnavailable(upgradeRequest(steady.wsUrl("/v1/stt?model=nova-3&audio_format=pcm_16000"), bearer(steady.key)));
    await expectUnavailable(upgradeRequest(steady.wsUrl("/v1/stt?model=nova-3&audio_format=pcm_16000&event_format=provider"), bearer(steady.key)));
    const file = await fetch(`${steady.url}/v1/stt/transcriptions?model=nova-3`, {
      method: "POST",
      headers: { ...bearer(steady.key), "content-type": "audio/wav" },
      body: wavFile(speak("Hello there")),
    });
    await expectUnavailable(file);
    expect(dg.faults.arrivals).toBe(dialled);
    await dg.faults.set(undefined);
  });
});

describe("the provider-protocol relay", () => {
  test("its upstream dying after it accepted the session counts against the provider (it cannot switch, but the failure is the provider's)", async () => {
    const before = (await healthOf(brief, "deepgram", "stt", "nova-3")).consecutive_failures;
    dg.midStream({ kind: "kill", afterBytes: 3200 });
    const c = connect(brief.wsUrl("/v1/stt?model=nova-3&audio_format=pcm_16000&event_format=provider"), bearer(brief.key));
    await c.opened;
    for (let i = 0; i < 4; i++) c.ws.send(new Uint8Array(3200));
    expect((await c.closed).close.code).toBe(1011);
    dg.midStream(undefined);
    expect((await healthOf(brief, "deepgram", "stt", "nova-3")).consecutive_failures).toBe(before + 1);
  });
});

describe("a circuit after its cooldown", () => {
  test("one session probes while the others skip it; a failed probe doubles the cooldown; a served probe closes it", async () => {
    await fake.faults.set({ kind: "status500" });
    for (let i = 0; i < 3; i++) expect(servedBy(await speakOnce(brief, ECHO, "Twelve chars"))).toBe("fixed");
    expect(await healthOf(brief, "oai-echo", "tts", "echo")).toMatchObject({ consecutive_failures: 3, cooldown_ms: 300 });

    // The probe meets a provider that hangs: while it waits, two more sessions skip the provider.
    await fake.faults.set({ kind: "hang" });
    await cooledDown(brief, "oai-echo", "echo");
    const heard = fake.faults.arrivals;
    const probe = startSpeaking(brief, ECHO, "Twelve chars");
    await until(() => fake.faults.arrivals === heard + 1);
    const others = await Promise.all([speakOnce(brief, ECHO, "Twelve chars"), speakOnce(brief, ECHO, "Twelve chars")]);
    expect(others.map((rec) => [servedBy(rec), tried(rec)])).toEqual([
      ["fixed", ["fixed"]],
      ["fixed", ["fixed"]],
    ]);
    expect(fake.faults.arrivals).toBe(heard + 1);
    // The probe's first attempt hangs on oai-echo (the fake's arrivals show it): nothing is told of it until it fails.
    expect([servedBy(probe.rec), tried(probe.rec)]).toEqual([undefined, []]);
    // Its client gone, the probe gives no verdict: the next session probes instead, and fails.
    probe.ws.close();
    await probe.closed;
    await fake.faults.set({ kind: "status500" });
    const failedProbe = await speakOnce(brief, ECHO, "Twelve chars");
    expect([tried(failedProbe), servedBy(failedProbe)]).toEqual([["oai-echo", "fixed"], "fixed"]);
    expect(await healthOf(brief, "oai-echo", "tts", "echo")).toMatchObject({ consecutive_failures: 4, cooldown_ms: 600 });

    await fake.faults.set(undefined);
    await cooledDown(brief, "oai-echo", "echo");
    const rec = await speakOnce(brief, ECHO, "Twelve chars");
    expect([rec.close.code, servedBy(rec)]).toEqual([1000, "oai-echo"]);
    expect(await healthOf(brief, "oai-echo", "tts", "echo")).toMatchObject({ status: "up", consecutive_failures: 0, retry_at: null, cooldown_ms: null });
    expect(await providerUp(brief, "oai-echo", TEST_MODEL)).toBe(1);
  });
});
