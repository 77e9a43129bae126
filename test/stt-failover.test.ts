import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { pcmOfWav } from "../src/audio/wav.ts";
import type { CatalogueData } from "../src/catalogue/catalogue.ts";
import { AssemblyAiStt } from "../src/providers/assemblyai/stt.ts";
import { DeepgramStt } from "../src/providers/deepgram/stt.ts";
import type { SttProvider } from "../src/providers/stt-types.ts";
import { openUpstreamStreams } from "../src/providers/upstream-ws.ts";
import { toFile } from "openai";
import type { TranscriptionStreamEvent } from "openai/resources/audio/transcriptions";
import { FAKE_ASSEMBLYAI_KEY, type FakeAssemblyAi, startFakeAssemblyAi } from "./fakes/assemblyai.ts";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { FAKE_DEEPGRAM_KEY, type FakeDeepgram, startFakeDeepgram } from "./fakes/deepgram.ts";
import type { MidStreamFault } from "./fakes/mid-stream-faults.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { openAiSdk } from "./helpers/sdk-clients.ts";
import { callProfile, realtimeProfile, recordsOf, say, until } from "./helpers/realtime.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { concat, silence, speak } from "./helpers/speech.ts";
import { bearer, connect, type Recording } from "./helpers/ws-client.ts";

// Mid-session failover of streaming STT (docs/routing.md, "Mid-session failover: STT"): Deepgram
// (its real adapter against its fake) serves PocketSphinx's model first, the embedded recognizer
// after it. The fake fails in the middle of the session (its socket killed, a hang, an error
// event); the session goes on with PocketSphinx, which is given the audio since the last final
// again. The finals are compared with those of the same runs without the fault: the fake's before
// the fault, then exactly PocketSphinx's of the replayed audio (it is deterministic), shifted to
// the caller's clock. Not through `@deepgram/sdk`: it speaks Deepgram's protocol, which voxroute
// serves only as `event_format=provider`, a passthrough that cannot switch mid-session.

const NOVA = "dg-nova"; // Deepgram Nova, as a provider of PocketSphinx's model
const FLUX = "dg-flux"; // Deepgram Flux, the same (Flux has an error event; Nova closes instead)
const AAI = "aai-us"; // AssemblyAI Universal-Streaming, the same (it takes only 50–1000 ms audio messages)
/** The silence watch of the upstream (UPSTREAM_IDLE_TIMEOUT_MS of the adapters), short for the hang tests. */
const UPSTREAM_IDLE_MS = 1500;

function relayCatalogue(): CatalogueData {
  const provider = (id: string, model: string) => ({
    id,
    name: id,
    kind: "cloud" as const,
    requiresVoice: false,
    defaults: { stt: { model } },
    bindings: [
      {
        capability: "stt" as const,
        id: model,
        canonical: "cmu/pocketsphinx-en-us",
        streaming: true,
        synchronous: false,
        inputFormats: ["pcm_16000" as const],
        price: { amount: "0.0006", per: "minute" as const },
      },
    ],
  });
  return { providers: [provider(NOVA, "nova-3"), provider(FLUX, "flux-general-en"), provider(AAI, "universal-streaming-english")], models: [] };
}

const options = (baseUrl: string, apiKey: string) => ({ apiKey, baseUrl, connectTimeoutMs: 5000, idleTimeoutMs: UPSTREAM_IDLE_MS });

/** A provider's adapter under another provider id. */
function relay(id: string, stt: Pick<SttProvider, "family"> & { open: NonNullable<SttProvider["open"]> }): SttProvider {
  return { id, family: (model) => stt.family(model), open: (req) => stt.open(req) };
}

let fake: FakeDeepgram;
let assemblyAi: FakeAssemblyAi;
let server: TestServer;
const app = startFakeApp();
beforeAll(async () => {
  fake = startFakeDeepgram();
  assemblyAi = startFakeAssemblyAi();
  const deepgram = new DeepgramStt(options(fake.http, FAKE_DEEPGRAM_KEY));
  const sttProviders = [relay(NOVA, deepgram), relay(FLUX, deepgram), relay(AAI, new AssemblyAiStt(options(assemblyAi.url, FAKE_ASSEMBLYAI_KEY)))];
  server = await startTestServer({}, { extra: { catalogue: relayCatalogue(), providers: [], sttProviders } });
});
afterAll(async () => {
  await stopServerAndFakes(server, fake, assemblyAi);
  app.stop();
});

/** The fixture's sentence, then 0.9 s of silence for the router VAD to end the turn on (3.645 s). */
const UTTERANCE = Buffer.concat([pcmOfWav(readFileSync(new URL("./fixtures/speech.wav", import.meta.url))), new Uint8Array(28_800)]);
const UTTERANCE_MS = (UTTERANCE.byteLength / 32_000) * 1000;

const sendAudio = (c: ReturnType<typeof connect>, pcm: Uint8Array) => {
  for (let at = 0; at < pcm.byteLength; at += 640) c.ws.send(pcm.subarray(at, at + 640));
};
const finals = (rec: Recording) =>
  rec.events.filter((e) => e.type === "stt.transcript.final").map(({ turn_id, text, audio_start_ms, audio_end_ms }) => ({ turn_id, text, audio_start_ms, audio_end_ms }));

/**
 * One session in 20 ms frames: an utterance, a commit (the provider's final ends the first turn),
 * the utterance again in real time; `fault` strikes in the middle of the second. Then close.
 */
async function session(provider: string, fault: MidStreamFault | undefined, key: string, fallback = "pocketsphinx"): Promise<Recording> {
  fake.midStream(fault);
  const c = connect(server.wsUrl(`/v1/stt?model=cmu/pocketsphinx-en-us&audio_format=pcm_16000&provider_order=${provider},${fallback}`), bearer(key));
  await until(() => c.rec.events.some((e) => e.type === "stt.session.started"));
  fake.midStream(undefined);
  sendAudio(c, UTTERANCE);
  c.send({ type: "stt.audio.commit" });
  await until(() => c.rec.events.some((e) => e.type === "stt.audio.committed"));
  for (let at = 0; at < UTTERANCE.byteLength; at += 640) {
    c.ws.send(UTTERANCE.subarray(at, at + 640));
    await Bun.sleep(20);
  }
  c.send({ type: "stt.session.close" });
  return c.closed;
}

/** What PocketSphinx alone makes of the utterance. */
async function pocketsphinxAlone(key: string): Promise<Recording> {
  const c = connect(server.wsUrl("/v1/stt?model=pocketsphinx-en-us&audio_format=pcm_16000&provider=pocketsphinx"), bearer(key));
  await c.opened;
  sendAudio(c, UTTERANCE);
  c.send({ type: "stt.session.close" });
  return c.closed;
}

const FAULTS: [string, string, MidStreamFault, RegExp][] = [
  ["the upstream socket killed", NOVA, { kind: "kill", afterSeconds: UTTERANCE_MS / 1000 + 1.5 }, /^deepgram closed the stream: 1006/],
  ["the upstream hanging (silent past the idle timeout)", NOVA, { kind: "hang", afterSeconds: UTTERANCE_MS / 1000 + 1.5 }, /^deepgram said nothing for 1500 ms while it was sent audio$/],
  // The last frame is the one that hangs it: the close then goes unanswered, and is given again to the next.
  ["the upstream hanging at the end (the close unanswered)", NOVA, { kind: "hang", afterBytes: 2 * UTTERANCE.byteLength - 1 }, /^deepgram went silent for 1500 ms$/],
  ["an upstream error event", FLUX, { kind: "error", afterSeconds: UTTERANCE_MS / 1000 + 1.5 }, /^deepgram flux failed: INTERNAL_SERVER_ERROR/],
];

describe.skipIf(!localSttAvailable)("/v1/stt: a provider failing mid-session is replaced by the next candidate", () => {
  for (const [what, provider, fault, reason] of FAULTS) {
    test(`${what}: the socket stays open, seq gapless, no final lost or repeated, the audio billed once`, async () => {
      const { key, tenantId } = await fundedAccount(server);
      const clean = await session(provider, undefined, key);
      const alone = await pocketsphinxAlone(key);
      const rec = await session(provider, fault, key);

      expect(clean.close).toEqual({ code: 1000, reason: "stt_complete" });
      expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
      expect(rec.events.map((e) => e.seq)).toEqual(rec.events.map((_, i) => i + 1));
      expect(rec.events.some((e) => e.type === "stt.error")).toBe(false);
      const at = rec.events.findIndex((e) => e.type === "stt.provider.switched");
      const switched = rec.events[at]!;
      const told = rec.events.slice(0, at);
      // The replay starts where the failed provider last settled the audio: its last final or commit.
      const settled = Math.max(...told.map((e) => (e.type === "stt.transcript.final" ? e.audio_end_ms : e.type === "stt.audio.committed" ? e.audio_ms : 0)));
      expect(switched).toMatchObject({ provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", previous_provider: provider, audio_ms: settled });
      expect(settled).toBe(Math.round(UTTERANCE_MS)); // the second utterance is replayed whole
      expect(switched.reason).toMatch(reason);
      expect(switched.input_config).toMatchObject({ turn_detector: "router_vad" });

      // Before the switch, the finals of the run without the fault; after it, PocketSphinx's of
      // the replayed utterance (the same words as alone; times on the caller's clock, each end
      // where its decoder was when the turn ended, which the audio's batching moves a little).
      const before = finals(clean).filter((f) => f.audio_end_ms <= settled);
      expect(before.length).toBeGreaterThan(0);
      expect(finals(rec).slice(0, before.length)).toEqual(before);
      const turn = `turn_${told.filter((e) => e.type === "stt.audio.committed" || e.type === "stt.audio.cleared").length + 1}`;
      const after = finals(rec).slice(before.length);
      expect(after.map((f) => [f.turn_id, f.text])).toEqual(finals(alone).map((f) => [turn, f.text]));
      expect(after.map((f) => f.text).join(" ")).toContain("thank you very much");
      finals(alone).forEach((f, i) => {
        expect(after[i]!.audio_start_ms).toBe(f.audio_start_ms + settled);
        expect(Math.abs(after[i]!.audio_end_ms - (f.audio_end_ms + settled))).toBeLessThanOrEqual(250);
      });

      const ended = rec.events.at(-1)!;
      expect(ended).toMatchObject({ type: "stt.session.ended", provider: "pocketsphinx", audio_ms: Math.round(2 * UTTERANCE_MS), billed_seconds: 8 });
      const activity = await lastActivity(server, tenantId);
      expect(activity).toMatchObject({ provider: "pocketsphinx", status: "completed", usageAmount: 8 });
      // Billed in parts: the failed binding the audio up to its last final, the next the rest.
      const lastFinal = Math.max(...told.filter((e) => e.type === "stt.transcript.final").map((e) => e.audio_end_ms));
      const parts = JSON.parse(activity.parts!) as { provider: string; model: string; units: number; credits: number }[];
      expect(parts.map((p) => [p.provider, p.model, p.units])).toEqual([
        [provider, "cmu/pocketsphinx-en-us", Math.ceil(lastFinal / 1000)],
        ["pocketsphinx", "cmu/pocketsphinx-en-us", 8 - Math.ceil(lastFinal / 1000)],
      ]);
      expect(parts.reduce((sum, p) => sum + p.credits, 0)).toBe(activity.credits);
      const attempts = JSON.parse(activity.attempts) as { provider: string; reason: string }[];
      expect(attempts).toHaveLength(1);
      expect(attempts[0]!.provider).toBe(provider);
      expect(attempts[0]!.reason).toMatch(reason);
      for (let i = 0; i < 100 && (fake.openSockets() > 0 || openUpstreamStreams() > 0); i++) await Bun.sleep(20);
      expect(fake.openSockets()).toBe(0);
      expect(openUpstreamStreams()).toBe(0);
    }, 30_000);
  }

  test("AssemblyAI taking over 20 ms frames (it takes 50–1000 ms messages only): the session goes on, the replay transcribed on the caller's clock", async () => {
    const { key } = await fundedAccount(server);
    const rec = await session(NOVA, FAULTS[0]![2], key, AAI);
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
    expect(rec.events.some((e) => e.type === "stt.error")).toBe(false);
    expect(rec.events.map((e) => e.seq)).toEqual(rec.events.map((_, i) => i + 1));
    const at = rec.events.findIndex((e) => e.type === "stt.provider.switched");
    expect(rec.events[at]).toMatchObject({ provider: AAI, previous_provider: NOVA, audio_ms: Math.round(UTTERANCE_MS) });
    const after = rec.events.slice(at).filter((e) => e.type === "stt.transcript.final");
    expect(after.map((f) => f.text)).toEqual(["thank you very much for your help"]);
    // The fake hears the speech from the start of the replayed utterance on (its first loud message).
    expect(after[0]!.audio_start_ms).toBeGreaterThanOrEqual(Math.round(UTTERANCE_MS));
    expect(after[0]!.audio_end_ms).toBeLessThanOrEqual(Math.round(2 * UTTERANCE_MS));
    const sizes = assemblyAi.streaming.at(-1)!.audio.map((a) => a.byteLength / 32);
    expect(sizes.every((ms) => ms >= 50 && ms <= 1000)).toBe(true);
    expect(rec.events.at(-1)).toMatchObject({ type: "stt.session.ended", provider: AAI, audio_ms: Math.round(2 * UTTERANCE_MS), billed_seconds: 8 });
  }, 30_000);

  test("without fallbacks (allow_fallbacks=false) the same fault ends the session: stt.error, then 1011", async () => {
    const { key } = await fundedAccount(server);
    fake.midStream({ kind: "kill", afterSeconds: 1 });
    const c = connect(server.wsUrl(`/v1/stt?model=cmu/pocketsphinx-en-us&audio_format=pcm_16000&provider_order=${NOVA},pocketsphinx&allow_fallbacks=false`), bearer(key));
    await until(() => c.rec.events.some((e) => e.type === "stt.session.started"));
    fake.midStream(undefined);
    sendAudio(c, UTTERANCE);
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.some((e) => e.type === "stt.provider.switched")).toBe(false);
  });
});

describe.skipIf(!localSttAvailable)("/oai/audio/transcriptions stream: true: the provider dying mid-file", () => {
  test("through the OpenAI SDK: only deltas and done, the text PocketSphinx makes of the whole file, billed once", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const sdk = openAiSdk(server, key);
    const file = () => toFile(readFileSync(new URL("./fixtures/speech.wav", import.meta.url)), "speech.wav", { type: "audio/wav" });
    const transcribe = async (provider: Record<string, unknown>) => {
      const events: TranscriptionStreamEvent[] = [];
      const stream = (await sdk.audio.transcriptions.create({
        file: await file(),
        model: "cmu/pocketsphinx-en-us",
        stream: true,
        provider: JSON.stringify(provider),
      } as never)) as unknown as AsyncIterable<TranscriptionStreamEvent>;
      for await (const ev of stream) events.push(ev);
      return events;
    };
    const alone = await transcribe({ only: ["pocketsphinx"] });
    const aloneRecord = await lastActivity(server, tenantId);
    fake.midStream({ kind: "kill", afterSeconds: 1 });
    const events = await transcribe({ order: [NOVA, "pocketsphinx"] });
    fake.midStream(undefined);
    expect(new Set(events.map((e) => e.type))).toEqual(new Set(["transcript.text.delta", "transcript.text.done"]));
    expect(events.at(-1)).toEqual(alone.at(-1)!);
    expect(events.at(-1)).toMatchObject({ type: "transcript.text.done", text: expect.stringContaining("thank you very much") });
    const record = await lastActivity(server, tenantId);
    expect(record.id).not.toBe(aloneRecord.id);
    expect(record).toMatchObject({ provider: "pocketsphinx", status: "completed", usageAmount: aloneRecord.usageAmount });
    expect(JSON.parse(record.attempts)).toEqual([{ provider: NOVA, reason: expect.stringMatching(/^deepgram closed the stream: 1006/) }]);
  }, 30_000);
});

describe.skipIf(!localSttAvailable)("/v1/realtime: the recognizer's provider dying mid-call", () => {
  test("PocketSphinx takes over: the application gets the next prompt and the call goes on", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await realtimeProfile(server, key, app.url("/echo"), { stt: { model: "pocketsphinx", input: { audio_format: "pcm_16000", provider_order: `${NOVA},pocketsphinx` } } });
    const first = concat([silence(300), speak("Thank you very much."), silence(900)]);
    const second = concat([speak("I would like a cup of coffee."), silence(900)]);
    // The fake dies a second into the caller's second turn.
    fake.midStream({ kind: "kill", afterBytes: first.byteLength + 32_000 });
    const c = await callProfile(server, profileId, key);
    await until(() => c.rec.events.some((e) => e.type === "realtime.session.started"));
    fake.midStream(undefined);
    await say(c, first);
    c.send({ type: "realtime.input_audio.commit" }); // Nova's turns end at Deepgram's endpointing: the fake needs a Finalize
    await until(() => c.rec.events.filter((e) => e.type === "realtime.response.audio.done").length === 1, 20_000);
    await say(c, second);
    await until(() => c.rec.events.filter((e) => e.type === "realtime.response.audio.done").length === 2, 20_000);
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;

    expect(rec.close.code).toBe(1000);
    expect(rec.events.some((e) => e.type === "realtime.error")).toBe(false);
    expect(rec.events.map((e) => e.seq)).toEqual(rec.events.map((_, i) => i + 1));
    const prompts = app.connections.at(-1)!.received.filter((f) => f.type === "prompt" && f.last);
    expect(prompts.map((p) => p.voicePrompt)).toEqual([expect.stringMatching(/^thank you/), expect.stringContaining("coffee")]);
    const [stt] = await recordsOf(server, `${rec.events[0]!.session_id}.stt`, 1);
    expect(stt).toMatchObject({ provider: "pocketsphinx", status: "completed" });
    expect(JSON.parse(stt!.attempts)).toEqual([{ provider: NOVA, reason: expect.stringMatching(/^deepgram closed the stream: 1006/) }]);
  }, 60_000);
});
