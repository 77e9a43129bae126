import { afterAll, beforeAll, expect, test } from "bun:test";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { type FakeOpenAi, startFakeOpenAi } from "./fakes/openai.ts";
import { openAiAt } from "./fakes/server-env.ts";
import { twilioCall, twilioRings, twilioStream } from "./fakes/twilio-caller.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { phoneLink, talkOver } from "./helpers/phone-calls.ts";
import { realtimeProfile, until } from "./helpers/realtime.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";

// A barge-in on a phone call while the answer is still being spoken: the TTS (OpenAI's fake)
// streams its speech at real time, so the caller talks over an answer the router is still
// sending. `clear` comes before any further audio of that answer, and the answer's audio sent
// before it is, to within one 20 ms frame (and the TTS's own 100 ms chunks), what the router
// counted as played when it decided (the application's `durationUntilInterruptMs`).

const app = startFakeApp();
let openai: FakeOpenAi;
let server: TestServer;
const AUTH_TOKEN = "twilio-auth-token-barge-in";
/** The OpenAI fake sends its speech in chunks of 4800 bytes: 100 ms of 24 kHz PCM. */
const TTS_CHUNK_MS = 100;

beforeAll(async () => {
  openai = startFakeOpenAi({ speechSpeed: 1 });
  server = await startTestServer(openAiAt(openai));
});
afterAll(() => stopServerAndFakes(server, openai, app));

test.skipIf(!localSttAvailable)(
  "the caller talks over an answer still streaming: clear before any more of it, within a frame of the decision",
  async () => {
    const { key } = await fundedAccount(server);
    const profileId = await realtimeProfile(server, key, app.url("/long-once"), { tts: { model: "tts-1", voice: "alloy" } });
    const { body } = await phoneLink(server, key, profileId, { carrier: "twilio", twilio_auth_token: AUTH_TOKEN });
    const call = twilioCall();
    const answer = await twilioRings(body.webhook_url, AUTH_TOKEN, call);
    const stream = twilioStream(answer, call);
    await stream.begin(answer.stream!.parameters);
    const conn = await talkOver(app, call.callSid, stream);
    // The caller's second turn ends and reaches the application, which answers it nothing: any media after `clear` would be the interrupted answer's.
    await until(() => conn.received.filter((m) => m.type === "prompt" && m.last === true).length === 2, 20_000);
    await Bun.sleep(300);

    const clearAt = stream.rec.frames.findIndex((f) => f.event === "clear");
    const before = stream.rec.frames.slice(0, clearAt);
    const after = stream.rec.frames.slice(clearAt + 1);
    // Mid-answer: the answer had not finished (no mark), and nothing of it came after `clear`.
    expect(before.filter((f) => f.event === "mark")).toEqual([]);
    expect(after.filter((f) => f.event === "media" || f.event === "mark")).toEqual([]);
    const interrupt = conn.received.find((m) => m.type === "interrupt") as { durationUntilInterruptMs: number };
    const sentMs = before.filter((f) => f.event === "media").length * 20;
    expect(interrupt.durationUntilInterruptMs).toBeGreaterThan(500);
    expect(sentMs - interrupt.durationUntilInterruptMs).toBeLessThanOrEqual(TTS_CHUNK_MS + 20);
    expect(sentMs).toBeGreaterThanOrEqual(interrupt.durationUntilInterruptMs);
    stream.stop();
    await stream.closed;
  },
  60_000,
);
