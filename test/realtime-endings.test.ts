import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { realtimeProfile, recordsOf, say, transcribe, until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, frames, silence, speak } from "./helpers/speech.ts";
import { bearer, type Client, connect } from "./helpers/ws-client.ts";

// /v1/realtime conversations end when they should, and only then: an application that hangs up
// in the middle of an answer, or never closes one, leaves no conversation hanging; a caller who
// sends no audio is not cut off before REALTIME_IDLE_TIMEOUT_MS (set small here, as is the
// per-audio STT_IDLE_TIMEOUT_MS of /v1/stt, which a conversation does not go by).

const ANSWER_QUIET_MS = 300;
const STT_IDLE_MS = 300;
const REALTIME_IDLE_MS = 3000;

let server: TestServer;
let idling: TestServer;
const app = startFakeApp();
// A generous connect timeout: on a crowded machine the application (in this process) may be slow to accept.
const CONNECT = { PROVIDER_CONNECT_TIMEOUT_MS: "30000" };
beforeAll(async () => {
  [server, idling] = await Promise.all([
    startTestServer({ ...CONNECT, REALTIME_ANSWER_QUIET_MS: String(ANSWER_QUIET_MS) }),
    startTestServer({ ...CONNECT, STT_IDLE_TIMEOUT_MS: String(STT_IDLE_MS), REALTIME_IDLE_TIMEOUT_MS: String(REALTIME_IDLE_MS) }),
  ]);
}, 15_000);
afterAll(async () => {
  for (let i = 0; i < 100 && server.ctx.sessions.size + idling.ctx.sessions.size > 0; i++) await Bun.sleep(20);
  expect(server.ctx.sessions.size + idling.ctx.sessions.size).toBe(0);
  expect(app.connections.filter((a) => !a.closed)).toEqual([]);
  await Promise.all([server.stop(0), idling.stop(0)]);
  app.stop();
});

/** A caller who asks one question on a profile whose application is the fake at `path`. */
async function ask(on: TestServer, path: string): Promise<Client> {
  const { key } = await fundedAccount(on);
  const c = connect(on.wsUrl(`/v1/realtime?profile_id=${await realtimeProfile(on, key, app.url(path))}`), bearer(key));
  await c.opened;
  await say(c, concat([silence(300), speak("Thank you very much for your help."), silence(900)]));
  return c;
}

/** Silence from a caller who stays on the line, until the conversation ends (or `maxMs` of it). */
async function holdTheLine(c: Client, maxMs: number) {
  const [frame] = frames(silence(20));
  for (let ms = 0; ms < maxMs && c.rec.close.code === 0; ms += 20) {
    c.ws.send(frame!);
    await Bun.sleep(20);
  }
}

const ANSWER = "You said: thank you very much for your help";

/** The answer's tokens as sent, and the audio between its start and its end, which must say it. */
async function expectSpoken(c: Client) {
  const tokens = c.rec.events.filter((e) => e.type === "realtime.response.text");
  expect(tokens.map((t) => t.token).join("")).toBe(ANSWER);
  // The application never said last: true; the router closed the answer itself.
  expect(tokens.slice(0, -1).every((t) => t.last === false)).toBe(true);
  expect(tokens.at(-1)).toMatchObject({ response_id: "resp_1", token: "", last: true });
  const started = c.rec.order.indexOf("realtime.response.audio.started");
  const done = c.rec.order.indexOf("realtime.response.audio.done");
  expect(started).toBeGreaterThan(c.rec.order.indexOf("realtime.response.text"));
  expect(c.rec.order.slice(started, done)).toContain("audio");
  expect(c.rec.events.find((e) => e.type === "realtime.response.audio.done")).toMatchObject({ response_id: "resp_1", characters: ANSWER.length });
  const heard = await transcribe(server, Buffer.concat(c.rec.audio));
  for (const word of ["thank", "help"]) expect(heard).toContain(word);
}

describe.skipIf(!localSttAvailable)("/v1/realtime: an application that leaves its answer open", () => {
  test("it hangs up mid-answer: what it sent is spoken, then realtime.error application_disconnected and 1011; the recognizer stops billing", async () => {
    const c = await ask(server, "/hangup");
    await holdTheLine(c, 15_000);
    expect(c.rec.close.code).toBe(1011);
    expect(c.rec.close.reason).toStartWith("application_disconnected: ");
    expect(c.rec.events.at(-1)).toMatchObject({ type: "realtime.error", code: "application_disconnected" });
    expect(c.rec.order.indexOf("realtime.error")).toBeGreaterThan(c.rec.order.lastIndexOf("audio"));
    await expectSpoken(c);

    // Every part has ended and been recorded; the recognizer's record is final.
    await until(() => server.ctx.sessions.size === 0);
    const sessionId = c.rec.events[0]!.session_id;
    const [stt] = await recordsOf(server, `${sessionId}.stt`);
    expect(stt).toMatchObject({ capability: "stt", usageUnit: "seconds" });
    expect(stt!.usageAmount).toBeGreaterThanOrEqual(3);
    await Bun.sleep(500);
    expect(await recordsOf(server, `${sessionId}.%`, 2)).toEqual(expect.arrayContaining([stt]));
    const appConn = app.connections.find((a) => (a.received[0] as { sessionId?: string }).sessionId === sessionId)!;
    expect(appConn.closed).toEqual({ code: 1000, reason: "bye" });
  }, 40_000);

  test("it never says last: true: after REALTIME_ANSWER_QUIET_MS without a token the answer is spoken and ends; the conversation goes on", async () => {
    const c = await ask(server, "/unfinished");
    await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"), 15_000);
    c.send({ type: "realtime.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "conversation_complete" });
    await expectSpoken(c);
    expect(rec.events.at(-1)).toMatchObject({ type: "realtime.session.ended", reason: "client_closed", usage: { tts_characters: ANSWER.length } });
  }, 40_000);
});

describe.skipIf(!localSttAvailable)("/v1/realtime: a caller who sends no audio", () => {
  test("outlives the per-audio STT idle timeout, and ends at REALTIME_IDLE_TIMEOUT_MS with realtime.error idle_timeout and 4408", async () => {
    const { key } = await fundedAccount(idling);
    const profileId = await realtimeProfile(idling, key, app.url("/echo"), { greeting: "Hello, how can I help?" });
    const openedAt = Date.now();
    const c = connect(idling.wsUrl(`/v1/realtime?profile_id=${profileId}`), bearer(key));
    await until(() => c.rec.close.code !== 0 || c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
    expect(c.rec.close.code).toBe(0);
    // Four times the STT idle timeout with nothing from the caller: the conversation is still on.
    await Bun.sleep(4 * STT_IDLE_MS);
    expect(c.rec.close.code).toBe(0);
    expect(c.rec.events.filter((e) => e.type === "realtime.error")).toEqual([]);

    const rec = await c.closed;
    expect(Date.now() - openedAt).toBeGreaterThanOrEqual(REALTIME_IDLE_MS);
    expect(rec.events.at(-1)).toMatchObject({ type: "realtime.error", code: "idle_timeout" });
    expect(rec.close).toEqual({ code: 4408, reason: JSON.stringify({ error: "idle_timeout" }) });
  }, 30_000);
});
