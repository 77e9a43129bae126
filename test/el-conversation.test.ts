import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { ServerWebSocket } from "bun";
import { like } from "drizzle-orm";
import { elConversationPort } from "../src/surfaces/el/conversation-port.ts";
import { WsPort } from "../src/surfaces/ws-port.ts";
import { LONG_ANSWER, startFakeApp } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { conversationStarted } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { spareCatalogue } from "./fakes/spare-stt.ts";
import { POCKETSPHINX_FAMILY } from "../src/providers/local-pocketsphinx/provider.ts";
import type { SttEvent, SttFamily, SttProvider, SttStream } from "../src/providers/stt-types.ts";
import { AsyncQueue } from "../src/util/async-queue.ts";
import { concat, frames, silence, speak, spokenSpans, windowsBySpeech } from "./helpers/speech.ts";

// /el/v1/convai/conversation driven by a client written from ElevenLabs' published protocol
// (upstreams sheet 1d): signed URLs, `user_audio_chunk` in, `conversation_initiation_metadata`,
// `user_transcript`, `agent_response`, base64 `audio` with event ids, `interruption`, ping/pong.

let server: TestServer;
const app = startFakeApp();
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  // Every conversation's sessions end once its socket has closed (the last one's may still be settling).
  for (let i = 0; i < 100 && server.ctx.sessions.size > 0; i++) await Bun.sleep(20);
  expect(server.ctx.sessions.size).toBe(0);
  await server.stop(0);
  app.stop();
});

/** A Speech Engine (a profile) whose application is the fake at `path`; `sttInput` is its recognizer's `input` (routing). */
async function engine(key: string, path: string, on: TestServer = server, sttInput?: Record<string, unknown>): Promise<string> {
  const stt = { model_id: "pocketsphinx", ...(sttInput ? { input: sttInput } : {}) };
  const res = await fetch(`${on.url}/el/v1/speech-engine`, {
    method: "POST",
    headers: { "xi-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ name: "support", speech_engine: { ws_url: app.url(path), protocol: "conversation_relay" }, service: { stt, tts: { model_id: "flite", voice_id: "slt" } } }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { speech_engine_id: string }).speech_engine_id;
}

async function signedUrl(key: string, agentId: string, on: TestServer = server): Promise<string> {
  const res = await fetch(`${on.url}/el/v1/convai/conversation/get-signed-url?agent_id=${agentId}`, { headers: { "xi-api-key": key } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { signed_url: string }).signed_url;
}

/** A conversation client as ElevenLabs documents it: answers every ping, records the rest. */
function converse(url: string) {
  const ws = new WebSocket(url);
  const messages: Record<string, any>[] = [];
  const pongs: unknown[] = [];
  const opened = new Promise<void>((resolve) => (ws.onopen = () => resolve()));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })));
  ws.onmessage = (e) => {
    const msg = JSON.parse(String(e.data));
    if (msg.type === "ping") {
      pongs.push(msg.ping_event.event_id);
      ws.send(JSON.stringify({ type: "pong", event_id: msg.ping_event.event_id }));
    }
    messages.push(msg);
  };
  const send = (msg: unknown) => ws.send(JSON.stringify(msg));
  /** Streams 16 kHz PCM in real time as `user_audio_chunk`s of 100 ms. */
  const say = async (pcm: Int16Array) => {
    const bytes = Buffer.concat(frames(pcm));
    for (let at = 0; at < bytes.byteLength; at += 3200) {
      send({ user_audio_chunk: bytes.subarray(at, at + 3200).toString("base64") });
      await Bun.sleep(100);
    }
  };
  return { ws, messages, pongs, opened, closed, send, say };
}

async function until(check: () => boolean, ms = 15_000) {
  for (const end = Date.now() + ms; !check() && Date.now() < end; ) await Bun.sleep(10);
  expect(check()).toBe(true);
}

/** A conversation with the engine, opened as the SDK opens one (initiation data first), once it has started (its metadata came). */
async function started(key: string, agentId: string, on: TestServer = server) {
  const c = converse(await signedUrl(key, agentId, on));
  await c.opened;
  c.send({ type: "conversation_initiation_client_data" });
  await until(() => c.messages.some((m) => m.type === "conversation_initiation_metadata"));
  return c;
}

const audioOf = (messages: Record<string, any>[], eventId: number) =>
  Buffer.concat(messages.filter((m) => m.type === "audio" && m.audio_event.event_id === eventId).map((m) => Buffer.from(m.audio_event.audio_base_64, "base64")));

describe.skipIf(!localSttAvailable)("/el/v1/convai/conversation", () => {
  test("a signed URL opens a conversation once: metadata, the first message, the caller's transcript, the agent's answer as audio; billed on /el", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const agentId = await engine(key, "/echo");
    const url = await signedUrl(key, agentId);
    expect(url).toStartWith(`${server.wsUrl("/el/v1/convai/conversation")}?agent_id=${agentId}&conversation_signature=`);
    const c = converse(url);
    await c.opened;
    c.send({ type: "conversation_initiation_client_data", conversation_config_override: { agent: { first_message: "Hello, how can I help?" } } });
    // The greeting is heard whole before the caller speaks: speech during it would cut it short (barge-in).
    await until(() => c.messages.some((m) => m.type === "agent_response") && audioOf(c.messages, 1).byteLength > 32_000);
    await c.say(concat([silence(300), speak("Thank you very much for your help."), silence(1000)]));
    // The caller hangs up once the answer's speech has come (over a second of it), not at its first piece.
    await until(() => c.messages.filter((m) => m.type === "agent_response").length === 2 && audioOf(c.messages, 2).byteLength > 32_000);
    c.ws.close();
    await c.closed;

    const first = c.messages[0]!;
    expect(first).toMatchObject({ type: "conversation_initiation_metadata", conversation_initiation_metadata_event: { agent_output_audio_format: "pcm_16000", user_input_audio_format: "pcm_16000" } });
    const conversationId = first.conversation_initiation_metadata_event.conversation_id as string;
    expect(c.messages.filter((m) => m.type === "agent_response").map((m) => m.agent_response_event)).toEqual([
      { agent_response: "Hello, how can I help?", event_id: 1 },
      { agent_response: "You said: thank you very much for your help", event_id: 2 },
    ]);
    expect(c.messages.find((m) => m.type === "user_transcript")).toEqual({ type: "user_transcript", user_transcription_event: { user_transcript: "thank you very much for your help" } });
    // Each answer's text and audio carry its number as event_id: the greeting 1, the answer 2; real speech, over a second each.
    expect(audioOf(c.messages, 1).byteLength).toBeGreaterThan(32_000);
    expect(audioOf(c.messages, 2).byteLength).toBeGreaterThan(32_000);
    const ids = c.messages.filter((m) => m.type === "audio").map((m) => m.audio_event.event_id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    const { db, schema } = server.ctx.database;
    let rows: (typeof schema.activity.$inferSelect)[] = [];
    for (let i = 0; i < 50 && rows.length < 3; i++, await Bun.sleep(20))
      rows = await db
        .select()
        .from(schema.activity)
        .where(like(schema.activity.id, `${conversationId}.%`));
    expect(rows.map((r) => [r.id.slice(conversationId.length), r.surface, r.capability, r.tenantId]).sort()).toEqual([
      [".resp_1", "el", "tts", tenantId],
      [".resp_2", "el", "tts", tenantId],
      [".stt", "el", "stt", tenantId],
    ]);

    // The signature was spent.
    const again = converse(url);
    expect(await again.closed).toEqual({ code: 4401, reason: JSON.stringify({ error: "invalid_client_secret" }) });
  }, 40_000);

  test("barge-in: the caller talks over the answer; an interruption names the answer's event_id, and no more of its audio comes", async () => {
    const { key } = await fundedAccount(server);
    const c = converse(await signedUrl(key, await engine(key, "/long")));
    await c.opened;
    c.send({ type: "conversation_initiation_client_data" });
    await c.say(concat([silence(300), speak("What are your opening hours?"), silence(1000)]));
    await until(() => c.messages.some((m) => m.type === "audio"));
    await Bun.sleep(800);
    await c.say(concat([speak("Thank you, that is all."), silence(1000)]));
    await until(() => c.messages.some((m) => m.type === "interruption"));
    c.ws.close();
    await c.closed;
    const at = c.messages.findIndex((m) => m.type === "interruption");
    expect(c.messages[at]).toEqual({ type: "interruption", interruption_event: { event_id: 1, reason: "user" } });
    expect(c.messages.slice(at + 1).some((m) => m.type === "audio" && m.audio_event.event_id <= 1)).toBe(false);
    // The answer had gone out whole as agent_response: it is corrected to what the caller heard.
    const correction = c.messages.find((m) => m.type === "agent_response_correction")!;
    expect(correction.agent_response_correction_event.original_agent_response).toBe(LONG_ANSWER);
    expect(LONG_ANSWER.startsWith(correction.agent_response_correction_event.corrected_agent_response)).toBe(true);
    expect(correction.agent_response_correction_event.event_id).toBe(1);
  }, 40_000);

  test("vad_score: the router VAD's speech probability of the caller, one per 256 ms of audio: high while speech plays, low in silence", async () => {
    const { key } = await fundedAccount(server);
    const c = await started(key, await engine(key, "/echo"));
    const pieces = [silence(1000), speak("Thank you very much for your help."), silence(1500)];
    const pcm = concat(pieces);
    await c.say(pcm);
    const windows = Math.floor(pcm.length / 16 / 256);
    const scored = () => c.messages.filter((m) => m.type === "vad_score");
    await until(() => scored().length >= windows && c.messages.some((m) => m.type === "user_transcript"));
    c.ws.close();
    await c.closed;

    expect(c.messages[0]!.type).toBe("conversation_initiation_metadata"); // nothing comes before it
    const scores = scored();
    expect(scores).toHaveLength(windows);
    for (const m of scores) expect(m).toEqual({ type: "vad_score", vad_score_event: { vad_score: expect.any(Number) } });
    const values = scores.map((m) => m.vad_score_event.vad_score as number);
    for (const v of values) expect(v).toBeWithin(0, 1.0000001);
    // The conversation was started before the caller spoke: score i covers the caller's audio up to (i + 1) × 256 ms.
    const { speech, quiet } = windowsBySpeech(
      spokenSpans(pieces),
      values.map((_, i) => (i + 1) * 256),
      256,
    );
    expect(speech.length).toBeGreaterThanOrEqual(4);
    expect(quiet.length).toBeGreaterThanOrEqual(6);
    for (const i of speech) expect(values[i]).toBeGreaterThan(0.5);
    for (const i of quiet) expect(values[i]).toBeLessThan(0.3);
  }, 30_000);

  test("user_message is a turn of its own; pings are answered with pong", async () => {
    const { key } = await fundedAccount(server);
    const c = await started(key, await engine(key, "/echo"));
    c.send({ type: "user_message", text: "What time is it?" });
    await until(() => c.messages.some((m) => m.type === "agent_response"));
    expect(c.messages.find((m) => m.type === "agent_response")!.agent_response_event.agent_response).toBe("You said: What time is it?");
    await until(() => c.pongs.length > 0, 8000);
    c.ws.close();
    await c.closed;
  }, 20_000);
});

describe.skipIf(!localSttAvailable)("/el conversation: a caller who only types", () => {
  test("is not cut off by the per-audio STT idle timeout; the conversation ends 4408 idle_timeout once nothing happens for REALTIME_IDLE_TIMEOUT_MS", async () => {
    const [sttIdleMs, realtimeIdleMs] = [300, 3000];
    const on = await startTestServer({ STT_IDLE_TIMEOUT_MS: String(sttIdleMs), REALTIME_IDLE_TIMEOUT_MS: String(realtimeIdleMs) });
    try {
      const { key } = await fundedAccount(on);
      const agentId = await engine(key, "/echo", on);
      const openedAt = Date.now();
      const c = await started(key, agentId, on);
      // Four times the STT idle timeout without a word or a sound from the caller.
      await Bun.sleep(4 * sttIdleMs);
      expect(c.ws.readyState).toBe(WebSocket.OPEN);
      c.send({ type: "user_message", text: "What time is it?" });
      await until(() => c.messages.some((m) => m.type === "agent_response") && audioOf(c.messages, 1).byteLength > 0);
      expect(await c.closed).toEqual({ code: 4408, reason: JSON.stringify({ error: "idle_timeout" }) });
      expect(Date.now() - openedAt).toBeGreaterThanOrEqual(4 * sttIdleMs + realtimeIdleMs);
    } finally {
      await on.stop(0);
    }
  }, 30_000);
});

/** A recognizer with a turn detector of its own: it ends the caller's turn itself once it has heard a second of audio. */
class TurnfulStt implements SttProvider {
  readonly id = "turnful";
  family(): SttFamily {
    return { ...POCKETSPHINX_FAMILY, name: "turnful", turnDetector: "acoustic", routerVadInside: false };
  }
  async open(): Promise<SttStream> {
    const queue = new AsyncQueue<SttEvent>();
    let bytes = 0;
    return {
      send: (audio) => {
        if (bytes < 32_000 && (bytes += audio.byteLength) >= 32_000) {
          queue.push({ type: "transcript", final: true, text: "heard", startMs: 0, endMs: 1000 });
          queue.push({ type: "committed", origin: "provider", atMs: 1000 });
        }
      },
      commit: () => queue.push({ type: "committed", origin: "client", atMs: bytes / 32 }),
      clear: () => queue.push({ type: "cleared", atMs: bytes / 32 }),
      end: () => queue.end(),
      cancel: () => queue.end(),
      bufferedAmount: 0,
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }
}

describe("/el conversation: a recognizer that decides the turns itself", () => {
  test("no vad_score: the router VAD does not run, so there is no probability to tell", async () => {
    const on = await startTestServer({}, { extra: { catalogue: spareCatalogue("turnful"), providers: [], sttProviders: [new TurnfulStt()] } });
    try {
      const { key } = await fundedAccount(on);
      const c = await started(key, await engine(key, "/echo", on, { provider_order: "turnful,pocketsphinx" }), on);
      await c.say(concat([silence(300), speak("Thank you very much for your help."), silence(500)]));
      await until(() => c.messages.some((m) => m.type === "agent_response"));
      c.ws.close();
      await c.closed;
      expect(c.messages.find((m) => m.type === "user_transcript")).toEqual({ type: "user_transcript", user_transcription_event: { user_transcript: "heard" } });
      expect(c.messages.some((m) => m.type === "vad_score")).toBe(false);
    } finally {
      await on.stop(0);
    }
  }, 30_000);
});

describe("/el conversation: opening", () => {
  test("get-signed-url: the /el envelope for a bad key (401) and another tenant's engine (404); an engine points at its conversation URL", async () => {
    const { key } = await fundedAccount(server);
    const agentId = await engine(key, "/echo");
    const other = await fundedAccount(server);
    const bad = await fetch(`${server.url}/el/v1/convai/conversation/get-signed-url?agent_id=${agentId}`, { headers: { "xi-api-key": "nope" } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({ detail: { status: "invalid_api_key" } });
    const foreign = await fetch(`${server.url}/el/v1/convai/conversation/get-signed-url?agent_id=${agentId}`, { headers: { "xi-api-key": other.key } });
    expect(foreign.status).toBe(404);
    expect(await foreign.json()).toMatchObject({ detail: { status: "not_found" } });
    const res = await fetch(`${server.url}/el/v1/speech-engine/${agentId}`, { headers: { "xi-api-key": key } });
    expect(((await res.json()) as { conversation_url: string }).conversation_url).toBe(`${server.wsUrl("/el/v1/convai/conversation")}?agent_id=${agentId}`);
  });

  test("a signature for another engine, or none and no key, closes 4401; a key in xi-api-key opens it", async () => {
    const { key } = await fundedAccount(server);
    const [a, b] = [await engine(key, "/echo"), await engine(key, "/echo")];
    const url = await signedUrl(key, a);
    const swapped = converse(url.replace(`agent_id=${a}`, `agent_id=${b}`));
    expect((await swapped.closed).code).toBe(4401);
    expect((await converse(server.wsUrl(`/el/v1/convai/conversation?agent_id=${a}`)).closed).code).toBe(4401);
    const ws = new WebSocket(server.wsUrl(`/el/v1/convai/conversation?agent_id=${a}`), { headers: { "xi-api-key": key } } as never);
    const first = await new Promise<Record<string, any>>((resolve) => (ws.onmessage = (e) => resolve(JSON.parse(String(e.data)))));
    expect(first.type).toBe("conversation_initiation_metadata");
    ws.close();
  }, 15_000);
});

describe("/el conversation: the port", () => {
  test("nothing before conversation_initiation_metadata, however long the start takes: the browser SDK takes the first frame as the handshake's answer; pings follow it", async () => {
    const sent: Record<string, any>[] = [];
    const raw = { readyState: 1, send: (frame: string) => sent.push(JSON.parse(frame)), close() {} };
    const port = elConversationPort(new WsPort(raw as unknown as ServerWebSocket<unknown>), "pcm_16000", 10);
    await Bun.sleep(60); // six pings' time while the recognizer and the application connect
    expect(sent).toEqual([]);
    port.event(conversationStarted("conv_1", "p"));
    for (let i = 0; i < 100 && sent.length < 3; i++) await Bun.sleep(10);
    port.close(1000, "");
    expect(sent[0]).toEqual({
      type: "conversation_initiation_metadata",
      conversation_initiation_metadata_event: { conversation_id: "conv_1", agent_output_audio_format: "pcm_16000", user_input_audio_format: "pcm_16000" },
    });
    expect(sent.slice(1, 3)).toEqual([
      { type: "ping", ping_event: { event_id: 1, ping_ms: null } },
      { type: "ping", ping_event: { event_id: 2, ping_ms: null } },
    ]);
  });
});
