import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { like } from "drizzle-orm";
import { LONG_ANSWER, startFakeApp } from "./fakes/conversation-relay-app.ts";
import { BrokenProvider, FixedPcmProvider, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { spareCatalogue } from "./fakes/spare-stt.ts";
import { POCKETSPHINX_FAMILY } from "../src/providers/local-pocketsphinx/provider.ts";
import { ProviderError } from "../src/errors.ts";
import type { SttEvent, SttProvider, SttStream } from "../src/providers/stt-types.ts";
import { AsyncQueue } from "../src/util/async-queue.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { callProfile, realtimeProfile, recordsOf, say, talkOverAnswer, transcribe, unreachableAppProfile, until } from "./helpers/realtime.ts";
import { concat, silence, speak } from "./helpers/speech.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// /v1/realtime end to end on the embedded engines: the caller's voice made by Flite, heard by
// PocketSphinx with the router VAD's turns, answered by the ConversationRelay fake, spoken back by
// Flite; the answer's audio recognized again to prove it is speech that says the answer.

let server: TestServer;
const app = startFakeApp();
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  // Every conversation's sessions ended, and every application socket was closed.
  expect(server.ctx.sessions.size).toBe(0);
  expect(app.connections.filter((a) => !a.closed)).toEqual([]);
  await server.stop(0);
  app.stop();
});

/** A profile whose application is the fake at `path`. */
const createProfile = (key: string, path: string, extra: Record<string, unknown> = {}, on: TestServer = server) => realtimeProfile(on, key, app.url(path), extra);

describe.skipIf(!localSttAvailable)("/v1/realtime on the embedded engines", () => {
  test("a caller's turn goes to the application as a prompt; its answer comes back as speech that says it; usage billed per part", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const profileId = await createProfile(key, "/echo");
    const c = await callProfile(server, profileId, key);
    // Audio sent before anything is connected is kept.
    await say(c, concat([silence(300), speak("Thank you very much for your help."), silence(900)]));
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "conversation_complete" });

    const ev = rec.events;
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    expect(ev[0]).toMatchObject({
      type: "realtime.session.started",
      profile_id: profileId,
      input_audio_format: "pcm_16000",
      output_audio_format: "pcm_16000",
      stt: { provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us" },
    });
    const sessionId = ev[0]!.session_id as string;
    expect(ev.some((e) => e.type === "realtime.input_audio.speech_started" && e.turn_id === "turn_1")).toBe(true);
    expect(ev.some((e) => e.type === "realtime.transcript.interim")).toBe(true);
    expect(ev.find((e) => e.type === "realtime.transcript.final")).toMatchObject({ turn_id: "turn_1", text: "thank you very much for your help" });
    expect(ev.find((e) => e.type === "realtime.turn.ended")).toMatchObject({ turn_id: "turn_1", text: "thank you very much for your help" });

    // The application got setup, then the finished prompt.
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === sessionId)!;
    expect(appConn.received[0]).toMatchObject({ type: "setup", sessionId, profileId });
    expect(appConn.received[1]).toEqual({ type: "prompt", voicePrompt: "thank you very much for your help", last: true });

    const answer = "You said: thank you very much for your help";
    const tokens = ev.filter((e) => e.type === "realtime.response.text");
    expect(tokens.map((t) => t.token).join("")).toBe(answer);
    expect(tokens.every((t) => t.response_id === "resp_1")).toBe(true);
    expect(tokens.at(-1)!.last).toBe(true);
    const started = ev.findIndex((e) => e.type === "realtime.response.audio.started");
    expect(ev[started]).toMatchObject({ response_id: "resp_1", provider: "flite" });
    // The profile's own voice speaks: `voice` is told only when a fallback model's does (realtime.md).
    expect(ev[started]).not.toHaveProperty("voice");
    const done = ev.find((e) => e.type === "realtime.response.audio.done")!;
    expect(done).toMatchObject({ response_id: "resp_1", characters: answer.length });

    // The audio: binary frames between audio started and done, 16 kHz speech that says the answer.
    const audio = Buffer.concat(rec.audio);
    expect(done.audio_ms).toBe(Math.round((audio.byteLength / 32000) * 1000));
    expect(audio.byteLength).toBeGreaterThan(32000);
    const heard = await transcribe(server, audio);
    for (const word of ["thank", "very", "much", "help"]) expect(heard).toContain(word);

    const ended = ev.at(-1)!;
    expect(ended).toMatchObject({ type: "realtime.session.ended", session_id: sessionId, reason: "client_closed", usage: { tts_characters: answer.length } });
    expect(ended.usage.stt_seconds).toBeGreaterThanOrEqual(3);

    // One activity record per part, each under the conversation's id.
    const rows = await recordsOf(server, `${sessionId}.%`, 2);
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));
    expect(byId[`${sessionId}.stt`]).toMatchObject({ tenantId, capability: "stt", provider: "pocketsphinx", usageUnit: "seconds", usageAmount: ended.usage.stt_seconds, status: "completed" });
    expect(byId[`${sessionId}.resp_1`]).toMatchObject({ tenantId, capability: "tts", provider: "flite", usageUnit: "characters", usageAmount: answer.length, status: "completed" });
    // No socket left open at the application.
    await until(() => appConn.closed !== undefined);
  }, 30_000);

  test("partial prompts, when the profile asks for them: the turn's words so far go out with last: false before the finished turn", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await createProfile(key, "/echo", { upstream: { url: app.url("/echo"), partial_prompts: true } });
    const c = await callProfile(server, profileId, key);
    await say(c, concat([silence(300), speak("Thank you very much for your help."), silence(900)]));
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === rec.events[0]!.session_id)!;
    const prompts = appConn.received.filter((m) => m.type === "prompt");
    expect(prompts.length).toBeGreaterThan(1);
    expect(prompts.at(-1)).toEqual({ type: "prompt", voicePrompt: "thank you very much for your help", last: true });
    const partials = prompts.slice(0, -1);
    expect(partials.every((p) => p.last === false && typeof p.voicePrompt === "string" && (p.voicePrompt as string).length > 0)).toBe(true);
    // Only the finished turn is answered.
    expect(rec.events.filter((e) => e.type === "realtime.response.audio.started")).toHaveLength(1);
  }, 30_000);

  test("barge-in: the caller talks over the answer; it stops at once, the client is told to drop what it holds, the application gets interrupt", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await createProfile(key, "/long");
    const c = await callProfile(server, profileId, key);
    await talkOverAnswer(c);
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);

    const interrupted = rec.events.find((e) => e.type === "realtime.response.interrupted")!;
    expect(interrupted).toMatchObject({ response_id: "resp_1" });
    expect(interrupted.audio_ms).toBeGreaterThan(800);
    expect(LONG_ANSWER.startsWith(interrupted.spoken_text)).toBe(true);
    expect(interrupted.spoken_text.length).toBeGreaterThan(0);
    expect(interrupted.spoken_text.length).toBeLessThan(LONG_ANSWER.length);
    // Caller speech came first, then the interruption; resp_1 was never reported done.
    const i = rec.order.indexOf("realtime.response.interrupted");
    expect(rec.order.slice(0, i).lastIndexOf("realtime.input_audio.speech_started")).toBeGreaterThan(rec.order.indexOf("realtime.response.audio.started"));
    // Not one audio frame of resp_1 after the interruption: the next audio is resp_2's.
    const after = rec.order.slice(i + 1);
    expect(after.indexOf("audio")).toBeGreaterThan(after.indexOf("realtime.response.audio.started"));

    const sessionId = rec.events[0]!.session_id;
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === sessionId)!;
    const interrupt = appConn.received.find((m) => m.type === "interrupt")!;
    expect(interrupt).toEqual({ type: "interrupt", utteranceUntilInterrupt: interrupted.spoken_text, durationUntilInterruptMs: interrupted.audio_ms });
    // The next turn was prompted after the interrupt, and answered as resp_2.
    const prompts = appConn.received.filter((m) => m.type === "prompt");
    expect(prompts.map((p) => p.voicePrompt)).toEqual(["what are your opening hours", expect.stringContaining("thank you")]);
    expect(appConn.received.indexOf(interrupt)).toBeLessThan(appConn.received.indexOf(prompts[1]!));
    expect(rec.events.some((e) => e.type === "realtime.response.audio.started" && e.response_id === "resp_2")).toBe(true);
    const ended = rec.events.at(-1)!;
    expect(ended.type).toBe("realtime.session.ended");
    expect(ended.usage.tts_characters).toBeLessThanOrEqual(2 * LONG_ANSWER.length);
  }, 40_000);

  test("a response sent with interruptible: false is spoken to its end over the caller's speech", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await createProfile(key, "/stubborn");
    const c = await callProfile(server, profileId, key);
    await say(c, concat([silence(300), speak("What are your opening hours?"), silence(900)]));
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.started"));
    await say(c, concat([speak("Thank you."), silence(900)]));
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.events.filter((e) => e.type === "realtime.input_audio.speech_started").length).toBeGreaterThanOrEqual(2);
    expect(rec.events.some((e) => e.type === "realtime.response.interrupted")).toBe(false);
    expect(rec.events.find((e) => e.type === "realtime.response.audio.done")).toMatchObject({ response_id: "resp_1", characters: LONG_ANSWER.length });
  }, 40_000);

  test("a greeting is spoken on connect; the application's end closes the conversation with its handoff after the goodbye is spoken", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await createProfile(key, "/goodbye", { greeting: "Hello, how can I help?" });
    const c = await callProfile(server, profileId, key);
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
    expect(c.rec.events.filter((e) => e.type === "realtime.response.text").map((e) => e.token)).toEqual(["Hello, how can I help?"]);
    await say(c, concat([speak("I have no questions."), silence(900)]));
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "application_ended" });
    const done = rec.events.filter((e) => e.type === "realtime.response.audio.done");
    expect(done.map((d) => d.response_id)).toEqual(["resp_1", "resp_2"]);
    expect(rec.events.at(-1)).toMatchObject({
      type: "realtime.session.ended",
      reason: "application_ended",
      handoff_data: "bye",
      usage: { tts_characters: "Hello, how can I help?".length + "Goodbye.".length },
    });
  }, 30_000);
});

describe.skipIf(!localSttAvailable)("/v1/realtime: language", () => {
  test("the application switches languages where the providers can: German speech from Pico, British English transcription; German transcription refused", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const profileId = await createProfile(key, "/polyglot", { tts: { model: "svox/pico", voice: "en-US" } });
    const c = connect(server.wsUrl(`/v1/realtime?profile_id=${profileId}`), bearer(key));
    await until(() => c.rec.events.some((e) => e.type === "realtime.session.started"));
    const sessionId = c.rec.events[0]!.session_id;
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === sessionId)!;
    // The German recognizer is refused; the British one is tried next, and replaces the first once it has started.
    await until(() => appConn.received.some((m) => m.type === "error"));
    expect(appConn.received.filter((m) => m.type === "error")).toEqual([{ type: "error", description: "transcriptionLanguage de-DE: pocketsphinx recognizes English only, not de-DE" }]);
    const { db, schema } = server.ctx.database;
    const records = () =>
      db
        .select()
        .from(schema.activity)
        .where(like(schema.activity.id, `${sessionId}.%`));
    for (let i = 0; i < 100 && !(await records()).some((r) => r.id.endsWith(".stt")); i++) await Bun.sleep(20); // the first recognizer was replaced and settled
    await say(c, concat([silence(300), speak("Thank you very much for your help."), silence(900)]));
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(appConn.received.find((m) => m.type === "prompt")).toEqual({ type: "prompt", voicePrompt: "thank you very much for your help", lang: "en-GB", last: true });
    // The client is told each half that took effect, and nothing of the refused one.
    expect(rec.events.filter((e) => e.type === "realtime.language.switched").map(({ stage, language, voice }) => ({ stage, language, voice }))).toEqual([
      { stage: "tts", language: "de-DE", voice: "de-DE" },
      { stage: "stt", language: "en-GB", voice: undefined },
    ]);
    // The answer is Pico's German voice: as long as it makes "Guten Tag." (its samples vary a little
    // from run to run), and not as long as its American voice makes it.
    const pico = async (voice: string) => {
      const t = connect(server.wsUrl(`/v1/tts?model=svox%2Fpico&voice=${voice}`), bearer(key));
      t.send({ type: "text", text: "Guten Tag." });
      t.send({ type: "close" });
      return Buffer.concat((await t.closed).audio).byteLength;
    };
    const answer = Buffer.concat(rec.audio).byteLength;
    expect(answer).toBe(await pico("de-DE"));
    expect(answer).not.toBe(await pico("en-US"));
    // Turn ids stay unique across the recognizers; the usage is theirs summed.
    const finals = rec.events.filter((e) => e.type === "realtime.transcript.final");
    expect(finals.map((e) => e.turn_id)).toEqual(["turn_2"]);
    const stt = (await records()).filter((r) => r.capability === "stt");
    expect(stt.map((r) => r.id).sort()).toEqual([`${sessionId}.stt`, `${sessionId}.stt_2`, `${sessionId}.stt_3`]);
    expect(stt.find((r) => r.id.endsWith(".stt_2"))).toMatchObject({ tenantId, status: "failed", usageAmount: 0 });
    expect(rec.events.at(-1)!.usage.stt_seconds).toBe(stt.reduce((n, r) => n + r.usageAmount, 0));
  }, 30_000);
});

describe.skipIf(!localSttAvailable)("/v1/realtime: an answer in another language", () => {
  test("an answer whose tokens name a lang is spoken by a voice that speaks it; the next is back in the profile's voice; a lang no voice speaks is refused and spoken as usual", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await createProfile(key, "/bilingual", { tts: { model: "svox/pico", voice: "en-US" } });
    const c = await callProfile(server, profileId, key);
    await say(c, concat([silence(300), speak("Good morning."), silence(900)]));
    await until(() => c.rec.events.filter((e) => e.type === "realtime.response.audio.done").length === 3);
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    const sessionId = rec.events[0]!.session_id;
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === sessionId)!;
    expect(appConn.received.filter((m) => m.type === "error")).toEqual([{ type: "error", description: "lang tlh: no voice of the profile's TTS model speaks tlh" }]);
    // No language event: the conversation's own language did not change.
    expect(rec.events.some((e) => e.type === "realtime.language.switched")).toBe(false);
    const pico = async (voice: string) => {
      const t = connect(server.wsUrl(`/v1/tts?model=svox%2Fpico&voice=${voice}`), bearer(key));
      t.send({ type: "text", text: "Guten Tag." });
      t.send({ type: "close" });
      return Buffer.concat((await t.closed).audio).byteLength;
    };
    const [german, american] = [await pico("de-DE"), await pico("en-US")];
    expect(german).not.toBe(american);
    expect(Buffer.concat(rec.audio).byteLength).toBe(german + 2 * american);
  }, 30_000);
});

describe.skipIf(!localSttAvailable)("/v1/realtime: a caller who vanishes", () => {
  test("mid-answer: the recognizer, the answer and the application socket all end; each part is billed; nothing stays open", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = await callProfile(server, await createProfile(key, "/long"), key);
    await say(c, concat([silence(300), speak("What are your opening hours?"), silence(900)]));
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.started"));
    const sessionId = c.rec.events[0]!.session_id;
    c.ws.close();
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === sessionId)!;
    await until(() => appConn.closed !== undefined);
    expect(appConn.closed).toEqual({ code: 1000, reason: "the caller left" });
    const rows = await recordsOf(server, `${sessionId}.%`, 2);
    expect(rows.map((r) => [r.id, r.tenantId, r.capability]).sort()).toEqual([
      [`${sessionId}.resp_1`, tenantId, "tts"],
      [`${sessionId}.stt`, tenantId, "stt"],
    ]);
    expect(rows.find((r) => r.capability === "stt")!.usageAmount).toBeGreaterThanOrEqual(3);
    expect(rows.find((r) => r.capability === "tts")!.usageAmount).toBeGreaterThan(0);
    await until(() => server.ctx.sessions.size === 0);
  }, 30_000);
});

describe.skipIf(!localSttAvailable)("/v1/realtime: the balance", () => {
  test("runs out mid-call: realtime.error insufficient_balance, then 4402; the caller's audio billed up to what the balance paid", async () => {
    // 35 credits: three seconds of the recognizer (10 a second, with the carry), or a word of Flite.
    const { key, tenantId } = await fundedAccount(server, 35);
    const c = await callProfile(server, await createProfile(key, "/silent"), key);
    const sending = say(c, concat([silence(300), speak("Thank you very much for your help. I would like to hear more about it."), silence(2000)]));
    const rec = await c.closed;
    await sending.catch(() => {});
    expect(rec.events.at(-1)).toMatchObject({ type: "realtime.error", code: "insufficient_balance" });
    expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "insufficient_balance" }) });
    const sessionId = rec.events[0]!.session_id;
    const rows = await recordsOf(server, `${sessionId}.stt`, 1);
    expect(rows[0]).toMatchObject({ tenantId, capability: "stt", usageAmount: 3, credits: 30 });
  }, 30_000);
});

/** The call's `realtime.provider.switched` events, once its events' `seq` is checked gapless. */
function switchesOf(rec: { events: Record<string, any>[] }) {
  expect(rec.events.map((e) => e.seq)).toEqual(rec.events.map((_, i) => i + 1));
  return rec.events.filter((e) => e.type === "realtime.provider.switched");
}

describe.skipIf(!localSttAvailable)("/v1/realtime: a TTS provider that fails", () => {
  /** A conversation on a server whose TEST_MODEL is served by `providers` in order (then the profile's `fallbacks`); the caller asks one question. */
  async function converse(providers: (BrokenProvider | FixedPcmProvider)[], fallbacks?: { model: string; voice: string }[], voice?: string) {
    const on = await startTestServer({}, { extra: { catalogue: testCatalogue(providers.map((p) => p.id)), providers } });
    try {
      const profile = await fetch(`${on.url}/v1/realtime/profiles`, {
        method: "POST",
        headers: { ...bearer(on.key), "content-type": "application/json" },
        body: JSON.stringify({ name: "fallback", pipeline: { stt: { model: "pocketsphinx" }, tts: { model: TEST_MODEL, voice, fallbacks }, upstream: { url: app.url("/echo") } } }),
      });
      const { id } = (await profile.json()) as { id: string };
      const c = await callProfile(on, id);
      await say(c, concat([silence(300), speak("Thank you very much."), silence(900)]));
      await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done" || e.type === "realtime.error"));
      c.send({ type: "realtime.session.close" });
      const rec = await c.closed;
      const rows = await recordsOf(on, `${rec.events[0]!.session_id}.resp_1`, 1);
      return { rec, answer: rows[0] };
    } finally {
      await on.stop(0);
    }
  }

  test("before its first audio: the next provider of the profile's routing speaks the answer", async () => {
    const { rec, answer } = await converse([new BrokenProvider("refusing", "refuse"), new FixedPcmProvider("fixed", 3)], undefined, "alloy");
    expect(rec.close.code).toBe(1000);
    expect(rec.events.find((e) => e.type === "realtime.response.audio.started")).toMatchObject({ response_id: "resp_1", provider: "fixed" });
    // The profile's own voice speaks (another provider of its model): `voice` is told only when a fallback model's does.
    expect(rec.events.find((e) => e.type === "realtime.response.audio.started")).not.toHaveProperty("voice");
    expect(rec.events.some((e) => e.type === "realtime.error")).toBe(false);
    // Nothing had been spoken: `audio.started` named the provider that serves, and no switch is told.
    expect(switchesOf(rec)).toEqual([]);
    expect(answer).toMatchObject({ provider: "fixed", status: "completed", usageAmount: "You said: thank you very much".length });
    expect(JSON.parse(answer!.attempts)).toEqual([{ provider: "refusing", reason: "connection refused" }]);
  }, 30_000);

  test("before its first audio: a fallback model of the profile speaks the answer in its voice, and the started event says which", async () => {
    const { rec, answer } = await converse([new BrokenProvider("refusing", "refuse")], [{ model: "flite", voice: "rms" }]);
    expect(rec.close.code).toBe(1000);
    expect(rec.events.find((e) => e.type === "realtime.response.audio.started")).toEqual(expect.objectContaining({ response_id: "resp_1", provider: "flite", model: "cmu/flite", voice: "rms" }));
    expect(answer).toMatchObject({ provider: "flite", model: "cmu/flite", voice: "rms", status: "completed" });
  }, 30_000);

  test("dying after its first audio, with a next candidate: the rest of the answer is heard from it, the client told once which provider and voice now speak", async () => {
    const { rec, answer } = await converse([new BrokenProvider("dying", "fail-after-audio"), new FixedPcmProvider("fixed", 3)], undefined, "alloy");
    expect(rec.close.code).toBe(1000);
    const sessionId = rec.events[0]!.session_id;
    expect(switchesOf(rec)).toEqual([
      {
        type: "realtime.provider.switched",
        event_id: expect.stringMatching(new RegExp(`^${sessionId}\\.\\d+$`)),
        seq: expect.any(Number),
        stage: "tts",
        response_id: "resp_1",
        provider: "fixed",
        model: TEST_MODEL,
        voice: "alloy",
        previous_provider: "dying",
        reason: "upstream returned 500",
      },
    ]);
    // Told between the answer's first audio (the dying provider's) and the next provider's.
    const order = rec.order.filter((t) => t !== "realtime.response.text");
    const at = order.indexOf("realtime.provider.switched");
    expect(order.slice(at - 2, at + 2)).toEqual(["realtime.response.audio.started", "audio", "realtime.provider.switched", "audio"]);
    expect(rec.events.some((e) => e.type === "realtime.error")).toBe(false);
    // One answer, its audio started once (by the provider that died) and done once, with the fallback's audio after the first.
    expect(rec.events.filter((e) => e.type === "realtime.response.audio.started")).toEqual([expect.objectContaining({ response_id: "resp_1", provider: "dying" })]);
    expect(rec.events.filter((e) => e.type === "realtime.response.audio.done")).toEqual([expect.objectContaining({ response_id: "resp_1" })]);
    // The dying provider marked no sentence as spoken: the whole answer went to the fallback, billed at its rate only.
    expect(answer).toMatchObject({ provider: "fixed", status: "completed", usageAmount: "You said: thank you very much".length, parts: null });
    expect(JSON.parse(answer!.attempts)).toEqual([{ provider: "dying", reason: "upstream returned 500" }]);
  }, 30_000);

  test("after its first audio, with no next candidate: realtime.error upstream_error, then 1011", async () => {
    const { rec } = await converse([new BrokenProvider("dying", "fail-after-audio")]);
    expect(rec.events.some((e) => e.type === "realtime.response.audio.started")).toBe(true);
    expect(rec.events.at(-1)).toMatchObject({ type: "realtime.error", code: "upstream_error" });
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
  }, 30_000);
});

/** A recognizer that refuses to connect, or that fails once it has sent an interim transcript. */
class BrokenStt implements SttProvider {
  constructor(
    readonly id: string,
    private readonly mode: "refuse" | "fail-after-transcript",
  ) {}
  family() {
    return POCKETSPHINX_FAMILY;
  }
  async open(): Promise<SttStream> {
    if (this.mode === "refuse") throw new ProviderError("connection refused", true);
    const queue = new AsyncQueue<SttEvent>();
    let heard = 0;
    return {
      send: () => {
        if (++heard !== 50) return;
        queue.push({ type: "transcript", final: false, text: "thank you", startMs: 0, endMs: 1000 });
        queue.fail(new ProviderError("upstream returned 500", true));
      },
      commit: () => {},
      clear: () => {},
      end: () => queue.end(),
      cancel: () => queue.end(),
      bufferedAmount: 0,
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }
}

describe.skipIf(!localSttAvailable)("/v1/realtime: an STT provider that fails", () => {
  /** A conversation whose recognizer is `broken` first, then PocketSphinx; the caller asks one question. */
  async function converse(broken: BrokenStt) {
    const on = await startTestServer({}, { extra: { catalogue: spareCatalogue(broken.id), providers: [], sttProviders: [broken] } });
    try {
      const id = await createProfile(on.key, "/echo", { stt: { model: "pocketsphinx", input: { provider_order: `${broken.id},pocketsphinx` } } }, on);
      const c = await callProfile(on, id);
      const sending = say(c, concat([silence(300), speak("Thank you very much."), silence(900)]));
      await until(() => c.rec.close.code !== 0 || c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
      await sending;
      if (!c.rec.close.code) c.send({ type: "realtime.session.close" });
      const rec = await c.closed;
      const rows = await recordsOf(on, `${rec.events[0]!.session_id}.stt`, 1);
      return { rec, stt: rows[0] };
    } finally {
      await on.stop(0);
    }
  }

  test("before its first transcript: the next recognizer of the profile's routing hears the caller", async () => {
    const { rec, stt } = await converse(new BrokenStt("refusing-stt", "refuse"));
    expect(rec.close.code).toBe(1000);
    expect(switchesOf(rec)).toEqual([]);
    expect(rec.events[0]).toMatchObject({ type: "realtime.session.started", stt: { provider: "pocketsphinx" } });
    expect(rec.events.find((e) => e.type === "realtime.turn.ended")).toMatchObject({ text: "thank you very much" });
    expect(stt).toMatchObject({ provider: "pocketsphinx", status: "completed" });
    expect(JSON.parse(stt!.attempts)).toEqual([{ provider: "refusing-stt", reason: "connection refused" }]);
  }, 30_000);

  test("after its first transcript: the next recognizer is given the caller's audio again and the call goes on", async () => {
    const { rec, stt } = await converse(new BrokenStt("dying-stt", "fail-after-transcript"));
    expect(rec.events.find((e) => e.type === "realtime.transcript.interim")).toMatchObject({ text: "thank you" });
    expect(rec.events.some((e) => e.type === "realtime.error")).toBe(false);
    expect(rec.events.find((e) => e.type === "realtime.turn.ended")).toMatchObject({ text: "thank you very much" });
    expect(rec.close.code).toBe(1000);
    // The client is told once, after the dying recognizer's interim, which one hears the caller now.
    expect(switchesOf(rec)).toEqual([
      expect.objectContaining({ stage: "stt", provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", previous_provider: "dying-stt", reason: "upstream returned 500" }),
    ]);
    expect(switchesOf(rec)[0]).not.toHaveProperty("response_id");
    const types = rec.events.map((e) => e.type);
    expect(types.indexOf("realtime.provider.switched")).toBeGreaterThan(types.indexOf("realtime.transcript.interim"));
    expect(stt).toMatchObject({ provider: "pocketsphinx", status: "completed" });
    expect(JSON.parse(stt!.attempts)).toEqual([{ provider: "dying-stt", reason: "upstream returned 500" }]);
  }, 30_000);
});

describe("/v1/realtime: opening", () => {
  const upgrade = { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" };

  test("a client secret opens its profile once; used again it closes 4401 invalid_client_secret", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await createProfile(key, "/echo");
    const minted = await fetch(`${server.url}/v1/realtime/client-secrets`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json" },
      body: JSON.stringify({ profile_id: profileId }),
    });
    const { client_secret } = (await minted.json()) as { client_secret: string };
    const c = connect(server.wsUrl(`/v1/realtime?client_secret=${client_secret}`));
    await until(() => c.rec.events.some((e) => e.type === "realtime.session.started"));
    expect(c.rec.events[0]).toMatchObject({ profile_id: profileId });
    c.send({ type: "realtime.session.close" });
    expect((await c.closed).close.code).toBe(1000);
    const again = await connect(server.wsUrl(`/v1/realtime?client_secret=${client_secret}`)).closed;
    expect(again.close).toEqual({ code: 4401, reason: JSON.stringify({ error: "invalid_client_secret" }) });
    expect((await connect(server.wsUrl("/v1/realtime?client_secret=vxr_cs_nope")).closed).close.code).toBe(4401);
  });

  test("before the upgrade: 402 with no balance, 404 for another tenant's profile, 400 without a profile; a bad key closes 4401", async () => {
    const rich = await fundedAccount(server);
    const profileId = await createProfile(rich.key, "/echo");
    const poor = await fundedAccount(server, 0);
    const poorProfile = await createProfile(poor.key, "/echo");
    const status = async (query: string, key: string) => {
      const res = await fetch(`${server.url}/v1/realtime?${query}`, { headers: { ...upgrade, ...bearer(key) } });
      return { status: res.status, body: await res.json() };
    };
    expect(await status(`profile_id=${poorProfile}`, poor.key)).toMatchObject({ status: 402, body: { error: "insufficient_balance" } });
    expect(await status(`profile_id=${profileId}`, poor.key)).toMatchObject({ status: 404, body: { error: "not_found" } });
    expect(await status("", rich.key)).toMatchObject({ status: 400, body: { error: "invalid_request" } });
    const bad = await connect(server.wsUrl(`/v1/realtime?profile_id=${profileId}`), bearer("vxr_bad")).closed;
    expect(bad.close).toEqual({ code: 4401, reason: JSON.stringify({ error: "invalid_api_key" }) });
  });

  test("a text frame outside the vocabulary: realtime.error, then 1003", async () => {
    const { key } = await fundedAccount(server);
    const c = connect(server.wsUrl(`/v1/realtime?profile_id=${await createProfile(key, "/echo")}`), bearer(key));
    await until(() => c.rec.events.some((e) => e.type === "realtime.session.started"));
    c.send({ type: "response.create" });
    const rec = await c.closed;
    expect(rec.events.at(-1)).toMatchObject({ type: "realtime.error", code: "invalid_realtime_frame" });
    expect(rec.close).toEqual({ code: 1003, reason: "invalid_realtime_frame" });
  });
});

describe("/v1/realtime: the application's faults", () => {
  test("unreachable: realtime.error application_unavailable, then 1011 naming the application", async () => {
    const { key } = await fundedAccount(server);
    const { id, port } = await unreachableAppProfile(server, key);
    const rec = await connect(server.wsUrl(`/v1/realtime?profile_id=${id}`), bearer(key)).closed;
    expect(rec.events.at(-1)).toMatchObject({ type: "realtime.error", code: "application_unavailable" });
    expect(rec.close.code).toBe(1011);
    expect(rec.close.reason).toContain(`127.0.0.1:${port}`);
  });

  test("the application closes: the conversation ends cleanly", async () => {
    const { key } = await fundedAccount(server);
    const rec = await connect(server.wsUrl(`/v1/realtime?profile_id=${await createProfile(key, "/closing")}`), bearer(key)).closed;
    expect(rec.close).toEqual({ code: 1000, reason: "application_closed" });
    expect(rec.events.at(-1)).toMatchObject({ type: "realtime.session.ended", reason: "application_closed" });
  });

  test("an application that breaks the vocabulary is answered with error, closed after ten in a row, and the conversation ends", async () => {
    const { key } = await fundedAccount(server);
    const c = await callProfile(server, await createProfile(key, "/malformed"), key);
    await say(c, concat([silence(300), speak("Hello there."), silence(900)]));
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "application_closed" });
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === rec.events[0]!.session_id)!;
    await until(() => appConn.closed !== undefined);
    expect(appConn.closed).toEqual({ code: 1008, reason: "too many invalid messages" });
    expect(appConn.received.filter((m) => m.type === "error")).toHaveLength(10);
  }, 20_000);

  test("sendDigits: /v1/realtime has no telephone line, and the application hears so (digits that are not digits, why); the conversation goes on", async () => {
    const { key } = await fundedAccount(server);
    const c = await callProfile(server, await createProfile(key, "/digits"), key);
    await say(c, concat([silence(300), speak("Hello there."), silence(900)]));
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "conversation_complete" });
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === rec.events[0]!.session_id)!;
    expect(appConn.received.filter((m) => m.type === "error").map((m) => m.description)).toEqual([
      "sendDigits: this conversation has no telephone line to send digits on",
      "sendDigits needs digits: 1 to 64 of 0-9, *, #, A-D and w",
    ]);
    expect(rec.events.filter((e) => e.type === "realtime.response.text").map((e) => e.token)).toEqual(["Done."]);
  }, 20_000);

  test("a silent application is given up after the reply timeout: application_timeout, 1011", async () => {
    const quick = await startTestServer({ REALTIME_APP_REPLY_TIMEOUT_MS: "500" });
    try {
      const c = await callProfile(quick, await createProfile(quick.key, "/silent", {}, quick));
      await say(c, concat([silence(300), speak("Hello there."), silence(900)]));
      const rec = await c.closed;
      expect(rec.events.at(-1)).toMatchObject({ type: "realtime.error", code: "application_timeout" });
      expect(rec.close.code).toBe(1011);
      expect(rec.close.reason).toContain("application_timeout");
    } finally {
      await quick.stop(0);
    }
  }, 20_000);
});
