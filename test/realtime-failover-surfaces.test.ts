import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import type { CatalogueData } from "../src/catalogue/catalogue.ts";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { ScriptedStt, scriptedSttCatalogue } from "./fakes/scripted-stt.ts";
import { ScriptedTts } from "./fakes/scripted-tts.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { FRONT_TLS, recorder, sdkThroughFront } from "./helpers/oai-realtime.ts";
import { recordsOf, until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, frames, silence, speak, to24k } from "./helpers/speech.ts";
import { tlsFront } from "./helpers/tls-front.ts";

// Realtime conversations on /el (ElevenLabs' conversation protocol, raw) and /oai/realtime (the
// OpenAI SDK's OpenAIRealtimeWS): the recognizer's provider dies in the middle of the caller's
// turn (PocketSphinx takes over from the kept audio), then the answer's TTS provider dies in the
// middle of its audio (the next one speaks it). The call goes on; the client sees no error and no
// event type a call without faults would not have shown; each part is billed once.

const app = startFakeApp();
const tts = new ScriptedTts("tts-dying");
const stt = new ScriptedStt("stt-dying");
let server: TestServer;
let front: ReturnType<typeof tlsFront>;

beforeAll(async () => {
  const catalogue: CatalogueData = testCatalogue(["tts-dying", "fixed"]);
  catalogue.providers.push(...scriptedSttCatalogue(["stt-dying"]).providers);
  server = await startTestServer({}, { extra: { catalogue, providers: [tts, new FixedPcmProvider("fixed", 3)], sttProviders: [stt] } });
  front = tlsFront(server.wsUrl(""));
});
afterAll(async () => {
  front.stop(true);
  for (let i = 0; i < 100 && server.ctx.sessions.size > 0; i++) await Bun.sleep(20);
  await server.stop(0);
  app.stop();
});

const UTTERANCE = concat([silence(300), speak("Thank you very much for your help."), silence(1000)]);
const ANSWER = "You said: thank you very much for your help";
/** The recognizer dies half a second into the caller's audio; the answer's provider after its first piece of audio. */
function breakBoth(): void {
  stt.plan.push({ silent: true, dieAfterBytes: 16_000 });
  tts.plan.push("die-mid-audio");
}

/** The same call without faults, then with both providers breaking (its recognizer first `sttFirst`): the second shows no message type the first did not. */
async function cleanThenBroken(call: (key: string, sttFirst: string) => Promise<Record<string, any>[]>) {
  const { key, tenantId } = await fundedAccount(server);
  const clean = await call(key, "pocketsphinx");
  breakBoth();
  const broken = await call(key, "stt-dying");
  // A keep-alive ping comes every few seconds: whether a call lasts long enough to see one depends on the machine's load.
  const types = (messages: Record<string, any>[]) => new Set(messages.map((m) => m.type).filter((type) => type !== "ping"));
  expect(types(broken)).toEqual(types(clean));
  // A conversation's answers are opened in the engines' interactive lane (docs/routing.md).
  expect(tts.interactive.length).toBeGreaterThan(0);
  expect(tts.interactive).not.toContain(false);
  return { broken, tenantId };
}

/** The call's answer and recognizer each billed once: the answer wholly by `fixed` (the dying provider finished no sentence), the caller's audio by PocketSphinx. */
async function expectBilledOnce(sessionId: string, tenantId: string) {
  const [answer] = await recordsOf(server, `${sessionId}.resp_1`, 1);
  expect(answer).toMatchObject({ tenantId, provider: "fixed", status: "completed", usageAmount: [...ANSWER].length, credits: [...ANSWER].length * 10, parts: null });
  expect(JSON.parse(answer!.attempts)).toEqual([{ provider: "tts-dying", reason: "upstream returned 500" }]);
  const [heard] = await recordsOf(server, `${sessionId}.stt`, 1);
  expect(heard).toMatchObject({ tenantId, provider: "pocketsphinx", parts: null });
  expect(heard!.credits).toBe(heard!.usageAmount * 10);
  expect(JSON.parse(heard!.attempts)).toEqual([{ provider: "stt-dying", reason: "stt-dying failed" }]);
}

describe.skipIf(!localSttAvailable)("/el conversation", () => {
  async function engine(key: string, sttFirst: string): Promise<string> {
    const res = await fetch(`${server.url}/el/v1/speech-engine`, {
      method: "POST",
      headers: { "xi-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({
        name: "failover",
        speech_engine: { ws_url: app.url("/echo"), protocol: "conversation_relay" },
        service: { stt: { model_id: "pocketsphinx", input: { provider_order: `${sttFirst},pocketsphinx` } }, tts: { model_id: TEST_MODEL } },
      }),
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { speech_engine_id: string }).speech_engine_id;
  }

  async function call(key: string, agentId: string) {
    const signed = await fetch(`${server.url}/el/v1/convai/conversation/get-signed-url?agent_id=${agentId}`, { headers: { "xi-api-key": key } });
    const ws = new WebSocket(((await signed.json()) as { signed_url: string }).signed_url);
    const messages: Record<string, any>[] = [];
    ws.onmessage = (e) => {
      const msg = JSON.parse(String(e.data));
      if (msg.type === "ping") ws.send(JSON.stringify({ type: "pong", event_id: msg.ping_event.event_id }));
      messages.push(msg);
    };
    const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve(e.code)));
    await new Promise((resolve) => (ws.onopen = resolve));
    ws.send(JSON.stringify({ type: "conversation_initiation_client_data" }));
    const bytes = Buffer.concat(frames(UTTERANCE));
    for (let at = 0; at < bytes.byteLength; at += 3200) {
      ws.send(JSON.stringify({ user_audio_chunk: bytes.subarray(at, at + 3200).toString("base64") }));
      await Bun.sleep(100);
    }
    await until(() => messages.some((m) => m.type === "agent_response"), 20_000);
    // The answer's audio: the fixed tone, 3 pieces of 20 ms for its text (after the dying provider's one).
    await until(() => messages.filter((m) => m.type === "audio").length >= 2, 20_000);
    ws.close(1000);
    await closed;
    return messages;
  }

  test("the recognizer dies mid-turn, the answer's TTS mid-audio: the call goes on, no unknown message, each billed once", async () => {
    const { broken: messages, tenantId } = await cleanThenBroken(async (key, sttFirst) => call(key, await engine(key, sttFirst)));
    expect(messages.find((m) => m.type === "user_transcript")).toEqual({ type: "user_transcript", user_transcription_event: { user_transcript: "thank you very much for your help" } });
    expect(messages.filter((m) => m.type === "agent_response").map((m) => m.agent_response_event.agent_response)).toEqual([ANSWER]);
    await expectBilledOnce(messages[0]!.conversation_initiation_metadata_event.conversation_id, tenantId);
  }, 60_000);
});

describe.skipIf(!localSttAvailable)("/oai/realtime with the OpenAI SDK", () => {
  async function profile(key: string, sttFirst: string): Promise<string> {
    const res = await fetch(`${server.url}/v1/realtime/profiles`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "oai failover",
        pipeline: { stt: { model: "pocketsphinx", input: { provider_order: `${sttFirst},pocketsphinx` } }, tts: { model: TEST_MODEL }, upstream: { url: app.url("/echo") } },
      }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  async function call(key: string, model: string) {
    const rt = new OpenAIRealtimeWS({ model, options: FRONT_TLS }, sdkThroughFront(front, key));
    const { events, append } = recorder(rt);
    await until(() => events.some((e) => e.type === "session.created"));
    await append(to24k(UTTERANCE), 4800);
    await until(() => events.some((e) => e.type === "response.done"), 20_000);
    rt.close();
    return events;
  }

  test("the recognizer dies mid-turn, the answer's TTS mid-audio: the call goes on, no error and no unknown event, each billed once", async () => {
    const { broken: events, tenantId } = await cleanThenBroken(async (key, sttFirst) => call(key, await profile(key, sttFirst)));
    expect(events.some((e) => e.type === "error")).toBe(false);
    expect(events.find((e) => e.type === "conversation.item.input_audio_transcription.completed")?.transcript).toBe("thank you very much for your help");
    expect(events.find((e) => e.type === "response.done")).toMatchObject({ response: { status: "completed" } });
    await expectBilledOnce(events[0]!.session.id, tenantId);
  }, 60_000);
});
