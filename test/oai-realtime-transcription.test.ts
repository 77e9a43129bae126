import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { like } from "drizzle-orm";
import OpenAI from "openai";
import { OpenAIRealtimeWebSocket } from "openai/realtime/websocket";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { FRONT_TLS, type FrontedServer, recorder, sdkThroughFront, startServerBehindTlsFront, stopServerBehindTlsFront } from "./helpers/oai-realtime.ts";
import { until as waitUntil } from "./helpers/realtime.ts";
import type { TestServer } from "./helpers/server.ts";
import { concat, silence, speak, to24k } from "./helpers/speech.ts";

// /oai/realtime transcription sessions (no application: any streaming STT model of this
// deployment behind OpenAI's transcription events), its keys in subprotocols as browsers send
// them, and ephemeral keys from /oai/realtime/client_secrets, all through the `openai` package.

let server: TestServer;
let front: FrontedServer["front"];
beforeAll(async () => void ({ server, front } = await startServerBehindTlsFront()));
afterAll(() => stopServerBehindTlsFront({ server, front }));

const SAID = "thank you very much for your help";
const utterance = () => concat([silence(300), speak("Thank you very much for your help."), silence(1000)]);
const TRANSCRIBE = { type: "transcription", audio: { input: { format: { type: "audio/pcm", rate: 24000 }, transcription: { model: "pocketsphinx" } } } } as const;

const until = (check: () => boolean) => waitUntil(check, 15_000);

/** An SDK transcription session, recorded, once session.created has come. */
async function openTranscription(key: string) {
  const rt = new OpenAIRealtimeWS({ intent: "transcription", options: FRONT_TLS }, sdkThroughFront(front, key));
  const r = recorder(rt);
  await until(() => r.of("session.created").length === 1);
  return { rt, r };
}

/** An SDK transcription session updated with `session`, once session.updated has come. */
async function transcriptionUpdatedTo(key: string, session: object) {
  const { rt, r } = await openTranscription(key);
  rt.send({ type: "session.update", session } as never);
  await until(() => r.of("session.updated").length === 1);
  return { rt, r };
}

/** 16 kHz PCM as G.711 µ-law at 8 kHz, by ffmpeg (an encoder that is not ours). */
function muLaw(pcm: Int16Array): Uint8Array {
  const out = Bun.spawnSync(["ffmpeg", "-loglevel", "error", "-f", "s16le", "-ar", "16000", "-ac", "1", "-i", "pipe:0", "-ar", "8000", "-f", "mulaw", "pipe:1"], { stdin: Buffer.from(pcm.buffer) });
  expect(out.exitCode).toBe(0);
  return out.stdout;
}

/** A raw WebSocket upgrade's answer, for what is refused before it. */
async function upgrade(path: string, headers: Record<string, string>) {
  return fetch(`${server.url}${path}`, { headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", ...headers } });
}

describe.skipIf(!localSttAvailable)("/oai/realtime transcription sessions", () => {
  test("intent=transcription with the SDK: the caller's turn as speech_started, committed and its completed transcript; billed as oai STT", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const { rt, r } = await transcriptionUpdatedTo(key, TRANSCRIBE);
    await r.append(to24k(utterance()), 4800);
    await until(() => r.of("conversation.item.input_audio_transcription.completed").length === 1);
    rt.close();

    expect(r.events[0]).toMatchObject({ type: "session.created", session: { type: "transcription", audio: { input: { transcription: null } } } });
    expect(r.of("session.updated")[0]).toMatchObject({
      session: { type: "transcription", audio: { input: { format: { type: "audio/pcm", rate: 24000 }, transcription: { model: "pocketsphinx" } } } },
    });
    const completed = r.of("conversation.item.input_audio_transcription.completed")[0]!;
    expect(completed.transcript).toBe(SAID);
    expect(r.of("input_audio_buffer.speech_started")[0]?.item_id).toBe(completed.item_id);
    expect(r.of("input_audio_buffer.committed")[0]).toMatchObject({ item_id: completed.item_id, previous_item_id: null });
    // Deltas only ever add: together they are the completed transcript.
    const deltas = r.of("conversation.item.input_audio_transcription.delta").filter((e) => e.item_id === completed.item_id);
    expect(deltas.map((e) => e.delta).join("")).toBe(SAID);
    expect(r.of("error")).toEqual([]);
    expect(r.events.every((e) => typeof e.event_id === "string")).toBe(true);

    const sessionId = r.events[0]!.session.id as string;
    const { db, schema } = server.ctx.database;
    let rows: (typeof schema.activity.$inferSelect)[] = [];
    for (let i = 0; i < 100 && rows.length < 1; i++, await Bun.sleep(20))
      rows = await db
        .select()
        .from(schema.activity)
        .where(like(schema.activity.id, `${sessionId}%`));
    expect(rows.map((row) => [row.surface, row.capability, row.tenantId])).toEqual([["oai", "stt", tenantId]]);
  }, 40_000);

  test("turn_detection null: nothing is committed until the client commits, then the whole transcript", async () => {
    const { key } = await fundedAccount(server);
    const { rt, r } = await transcriptionUpdatedTo(key, { type: "transcription", audio: { input: { transcription: { model: "pocketsphinx" }, turn_detection: null } } });
    await r.append(to24k(utterance()), 4800);
    // A second of silence has gone by: a server turn detector would have ended the turn.
    expect(r.of("input_audio_buffer.committed")).toEqual([]);
    rt.send({ type: "input_audio_buffer.commit" });
    await until(() => r.of("conversation.item.input_audio_transcription.completed").length === 1);
    rt.close();
    expect(r.of("session.updated")[0]).toMatchObject({ session: { audio: { input: { turn_detection: null } } } });
    expect(r.of("conversation.item.input_audio_transcription.completed")[0]!.transcript).toBe(SAID);
    expect(r.of("error")).toEqual([]);
  }, 40_000);

  // PocketSphinx's model is wideband: telephone audio is heard, not understood, so this checks the
  // clock. (test/oai-realtime-audio.test.ts checks the G.711 decoding sample for sample.)
  test("G.711 µ-law at 8 kHz: the caller's speech is heard where it was, on the session's clock", async () => {
    const { key } = await fundedAccount(server);
    const { rt, r } = await transcriptionUpdatedTo(key, { type: "transcription", audio: { input: { format: { type: "audio/pcmu" }, transcription: { model: "pocketsphinx" } } } });
    const speech = speak("Thank you very much for your help.");
    await r.append(muLaw(concat([silence(1000), speech, silence(1000)])), 800);
    await until(() => r.of("input_audio_buffer.committed").length === 1);
    rt.close();
    expect(r.of("session.updated")[0]).toMatchObject({ session: { audio: { input: { format: { type: "audio/pcmu" } } } } });
    const spokenEndMs = 1000 + speech.length / 16;
    // Read at the wrong rate, the speech would start at 500 or 2000 ms.
    expect(r.of("input_audio_buffer.speech_started")[0]!.audio_start_ms).toBeWithin(700, 1300);
    expect(r.of("input_audio_buffer.speech_stopped")[0]!.audio_end_ms).toBeWithin(spokenEndMs - 300, spokenEndMs + 1000);
  }, 40_000);

  test("settings it cannot take are OpenAI error events naming the parameter; the session goes on", async () => {
    const { key } = await fundedAccount(server);
    const { rt, r } = await openTranscription(key);
    rt.send({ type: "session.update", event_id: "evt_model", session: { ...TRANSCRIBE, audio: { input: { transcription: { model: "no-such-model" } } } } } as never);
    rt.send({
      type: "session.update",
      event_id: "evt_format",
      session: { ...TRANSCRIBE, audio: { input: { format: { type: "audio/pcm", rate: 16000 }, transcription: { model: "pocketsphinx" } } } },
    } as never);
    rt.send({ type: "response.create", event_id: "evt_response" });
    rt.send({ type: "session.update", session: TRANSCRIBE });
    await until(() => r.of("session.updated").length === 1 && r.of("error").length === 3);
    rt.close();
    const [model, format, response] = r.of("error").map((e) => e.error);
    expect(model).toMatchObject({ type: "invalid_request_error", code: "model_not_found", param: "session.audio.input.transcription.model", event_id: "evt_model" });
    expect(format).toMatchObject({ type: "invalid_request_error", param: "session.audio.input.format", event_id: "evt_format" });
    expect(response).toMatchObject({ type: "invalid_request_error", param: "type", event_id: "evt_response" });
  }, 20_000);

  test("an append whose audio is not base64 is an OpenAI error event naming audio; nothing of it is heard and the session goes on", async () => {
    const { key } = await fundedAccount(server);
    const { rt, r } = await transcriptionUpdatedTo(key, TRANSCRIBE);
    const forged = ["this is not base64!", "AAAA AAAA", "AAAAA", "AA==AAAA", "-_-_", "A===", "AA=A", "AAA\n", "AAA\u00e9"];
    for (const [i, audio] of forged.entries()) rt.send({ type: "input_audio_buffer.append", event_id: `evt_bad_${i}`, audio } as never);
    await r.append(to24k(utterance()), 4800);
    await until(() => r.of("conversation.item.input_audio_transcription.completed").length === 1);
    rt.close();
    expect(r.of("error").map((e) => e.error)).toEqual(
      forged.map((_, i) => expect.objectContaining({ type: "invalid_request_error", code: "invalid_request", param: "audio", event_id: `evt_bad_${i}` })),
    );
    expect(r.of("conversation.item.input_audio_transcription.completed")[0]!.transcript).toBe(SAID);
  }, 40_000);

  test("an account that cannot pay: the model's session.update is answered insufficient_quota, then 4402", async () => {
    const { key } = await fundedAccount(server, 0);
    const rt = new OpenAIRealtimeWS({ intent: "transcription", options: FRONT_TLS }, sdkThroughFront(front, key));
    const r = recorder(rt);
    const closed = new Promise<number>((resolve) => rt.socket.on("close", (code: number) => resolve(code)));
    await until(() => r.of("session.created").length === 1);
    rt.send({ type: "session.update", session: TRANSCRIBE });
    expect(await closed).toBe(4402);
    expect(r.of("error")[0]!.error).toMatchObject({ type: "insufficient_quota", code: "insufficient_quota" });
    expect(r.of("session.updated")).toEqual([]);
  });

  test("an API key in the oai-insecure-api-key subprotocol opens a session and the upgrade answers `realtime`; a wrong one closes 4401", async () => {
    const { key } = await fundedAccount(server);
    const ws = new WebSocket(server.wsUrl("/oai/realtime?intent=transcription"), ["realtime", `oai-insecure-api-key.${key}`]);
    const first = await new Promise<Record<string, any>>((resolve) => (ws.onmessage = (e) => resolve(JSON.parse(String(e.data)))));
    expect(ws.protocol).toBe("realtime");
    expect(first).toMatchObject({ type: "session.created", session: { type: "transcription" } });
    ws.close();

    const bad = new WebSocket(server.wsUrl("/oai/realtime?intent=transcription"), ["realtime", "openai-insecure-api-key.sk-wrong"]);
    const closed = await new Promise<CloseEvent>((resolve) => (bad.onclose = resolve));
    expect(closed.code).toBe(4401);
  });

  test("an ephemeral key from client_secrets (the SDK's) opens one browser session through subprotocols, once; its settings are the session's", async () => {
    const { key } = await fundedAccount(server);
    const before = Math.floor(Date.now() / 1000);
    const secret = await new OpenAI({ apiKey: key, baseURL: `${server.url}/oai` }).realtime.clientSecrets.create({ expires_after: { anchor: "created_at", seconds: 120 }, session: TRANSCRIBE });
    const after = Math.ceil(Date.now() / 1000);
    expect(secret.value).toStartWith("ek_");
    // 120 s from its creation, which lies between the two readings of the clock (in whole seconds, as OpenAI gives it).
    expect(secret.expires_at).toBeGreaterThanOrEqual(before + 120);
    expect(secret.expires_at).toBeLessThanOrEqual(after + 120);
    expect(secret.session).toMatchObject({ type: "transcription", audio: { input: { transcription: { model: "pocketsphinx" } } } });

    // OpenAI's browser client: `realtime` and `openai-insecure-api-key.ek_…` as subprotocols, wss only.
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
    const browser = new OpenAIRealtimeWebSocket({ intent: "transcription" }, new OpenAI({ apiKey: secret.value, baseURL: `https://127.0.0.1:${front.port}/oai`, dangerouslyAllowBrowser: true }));
    const r = recorder(browser);
    await until(() => r.events.length > 0);
    delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    // The secret's session was taken: the transcription runs from the first frame, with no update.
    expect(r.events[0]).toMatchObject({ type: "session.created", session: { type: "transcription", audio: { input: { transcription: { model: "pocketsphinx" } } } } });
    await r.append(to24k(utterance()), 4800);
    await until(() => r.of("conversation.item.input_audio_transcription.completed").length === 1);
    expect(r.of("conversation.item.input_audio_transcription.completed")[0]!.transcript).toBe(SAID);
    browser.close();

    const again = new WebSocket(server.wsUrl("/oai/realtime?intent=transcription"), ["realtime", `openai-insecure-api-key.${secret.value}`]);
    const closed = await new Promise<CloseEvent>((resolve) => (again.onclose = resolve));
    expect([closed.code, closed.reason]).toEqual([4401, JSON.stringify({ error: "invalid_client_secret" })]);
  }, 40_000);

  test("client_secrets refuses what no socket could open, in OpenAI's error object", async () => {
    const { key } = await fundedAccount(server);
    const mint = (body: unknown) =>
      fetch(`${server.url}/oai/realtime/client_secrets`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const cases: [unknown, number, string][] = [
      [{ session: { type: "realtime", model: "gpt-realtime" } }, 400, "session.model"],
      [{ session: { type: "transcription", audio: { input: { transcription: {} } } } }, 400, "session.audio.input.transcription.model"],
      [{ expires_after: { anchor: "created_at", seconds: 5 }, session: TRANSCRIBE }, 400, "expires_after.seconds"],
      [{}, 400, "session"],
    ];
    for (const [body, status, param] of cases) {
      const res = await mint(body);
      expect([res.status, ((await res.json()) as { error: { param: string } }).error.param]).toEqual([status, param]);
    }
    const noKey = await fetch(`${server.url}/oai/realtime/client_secrets`, { method: "POST", body: JSON.stringify({ session: TRANSCRIBE }) });
    expect(noKey.status).toBe(401);
    const res = await upgrade("/oai/realtime?model=gpt-realtime", { authorization: `Bearer ${key}` });
    expect(res.status).toBe(400);
  });
});
