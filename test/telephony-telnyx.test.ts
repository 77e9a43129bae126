import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { heardDigits } from "./fakes/dtmf-ear.ts";
import { fromPhoneAudio } from "./fakes/phone-caller.ts";
import { telnyxAccount, telnyxCall, telnyxRings, telnyxStream } from "./fakes/telnyx-caller.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { appCallOf, DIALED_FRAMES, PHONE_TURN, phoneLink, spokenSeconds } from "./helpers/phone-calls.ts";
import { realtimeProfile, recordsOf, until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { speak } from "./helpers/speech.ts";

// A Telnyx TeXML number pointed at a realtime profile (docs/telephony.md): the fake Telnyx signs
// the webhook with its Ed25519 key, reads the TeXML, opens the stream (its credential in the URL's
// query) and speaks real speech as PCMU; the profile is PocketSphinx → the ConversationRelay fake → Flite.

const app = startFakeApp();
const account = telnyxAccount();
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => {
  server.stop(0);
  app.stop();
});

async function linked(path: string, publicKey = account.publicKey) {
  const { key, tenantId } = await fundedAccount(server);
  const profileId = await realtimeProfile(server, key, app.url(path));
  const made = await phoneLink(server, key, profileId, { carrier: "telnyx", telnyx_public_key: publicKey });
  expect(made.status).toBe(201);
  expect(made.body.carrier).toBe("telnyx");
  return { tenantId, profileId, webhookUrl: made.body.webhook_url as string };
}

/** A Telnyx call to a new profile answered by the application at `path`, its stream begun. */
async function ringing(path: string) {
  const { webhookUrl } = await linked(path);
  const call = telnyxCall();
  const answer = await telnyxRings(webhookUrl, account, call);
  const stream = telnyxStream(answer, call);
  await stream.begin({});
  return { call, answer, stream };
}

describe.skipIf(!localSttAvailable)("a Telnyx call", () => {
  test("TeXML connects a bidirectional PCMU stream; the answer comes back as µ-law with a mark, DTMF reaches the application, stop bills once", async () => {
    const { tenantId, profileId, webhookUrl } = await linked("/goodbye");
    const call = telnyxCall();
    const answer = await telnyxRings(webhookUrl, account, call);
    expect(answer.status).toBe(200);
    expect(answer.stream!.attributes).toMatchObject({ bidirectionalMode: "rtp", bidirectionalCodec: "PCMU" });
    const url = new URL(answer.stream!.url);
    expect(`${url.origin}${url.pathname}`).toBe(server.wsUrl("/v1/telephony/media/telnyx"));
    expect(url.searchParams.get("credential")).toStartWith("vxr_cs_");

    const stream = telnyxStream(answer, call);
    await stream.begin({});
    const conn = await (async () => {
      await until(() => appCallOf(app, call.callSid) !== undefined);
      return appCallOf(app, call.callSid)!;
    })();
    expect(conn.received[0]).toMatchObject({ type: "setup", profileId, callSid: call.callSid, from: call.from, to: call.to, direction: "inbound" });
    stream.dtmf("#");
    await until(() => conn.received.some((m) => m.type === "dtmf"));
    expect(conn.received.filter((m) => m.type === "dtmf")).toEqual([{ type: "dtmf", digit: "#" }]);

    void stream.play(PHONE_TURN);
    const rec = await stream.closed;
    // The application said goodbye and ended: its answer, its mark, then a normal close.
    expect(rec.close!.code).toBe(1000);
    expect(stream.rec.frames.filter((f) => f.event !== "media")).toEqual([{ event: "mark", mark: { name: expect.any(String) } }]);
    expect(stream.sent("media").every((f) => Object.keys(f).join() === "event,media")).toBe(true);
    expect(rec.media.slice(0, -1).every((m) => m.length === 160)).toBe(true);
    const heard = spokenSeconds(fromPhoneAudio(Buffer.concat(rec.media)));
    const expected = spokenSeconds(speak("Goodbye."));
    expect(Math.abs(heard - expected)).toBeLessThan(expected * 0.15);

    const records = [...(await recordsOf(server, `call_${call.callSid}_%.stt`, 1)), ...(await recordsOf(server, `call_${call.callSid}_%.resp_1`, 1))];
    expect(records.map((r) => [r.tenantId, r.provider, r.status])).toEqual([
      [tenantId, "pocketsphinx", "completed"],
      [tenantId, "flite", "completed"],
    ]);
    expect(records[1]!.usageAmount).toBe("Goodbye.".length);
  }, 60_000);

  test("the caller hangs up in the middle of a long answer: clear on barge-in, then stop ends the call", async () => {
    const { call, stream } = await ringing("/long");
    await stream.play(PHONE_TURN);
    await until(() => stream.rec.media.length > 25, 20_000);
    await stream.play(PHONE_TURN);
    await until(() => stream.sent("clear").length === 1, 20_000);
    expect(stream.sent("clear")[0]).toEqual({ event: "clear" });
    await until(() => appCallOf(app, call.callSid)!.received.some((m) => m.type === "interrupt"));
    stream.stop();
    await stream.closed;
    const records = await recordsOf(server, `call_${call.callSid}_%.stt`, 1);
    expect(records.length).toBe(1);
  }, 60_000);
});

test("the application's sendDigits: the caller hears DTMF tones in 20 ms media frames (a Goertzel receiver, fakes/dtmf-ear.ts)", async () => {
  const { stream } = await ringing("/dialer");
  await until(() => stream.rec.media.length >= DIALED_FRAMES, 10_000);
  expect(stream.rec.media.every((m) => m.length === 160)).toBe(true);
  expect(heardDigits(Buffer.concat(stream.rec.media)).digits).toBe("1234#");
  stream.stop();
  await stream.closed;
}, 30_000);

describe("refusals", () => {
  test("another key's signature, a stale timestamp, no signature: 403", async () => {
    const { webhookUrl } = await linked("/echo");
    const call = telnyxCall();
    expect((await telnyxRings(webhookUrl, telnyxAccount(), call)).status).toBe(403);
    expect((await telnyxRings(webhookUrl, account, call, Math.floor(Date.now() / 1000) - 600)).status).toBe(403);
    const unsigned = await fetch(webhookUrl, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "CallSid=x" });
    expect(unsigned.status).toBe(403);
    expect((await telnyxRings(webhookUrl, account, call)).status).toBe(200);
  });

  test("a replayed credential is closed 4401; a frame that is not JSON closes 1008", async () => {
    const { call, answer, stream: first } = await ringing("/echo");
    await until(() => appCallOf(app, call.callSid) !== undefined);
    const replay = telnyxStream(answer, call);
    await replay.begin({});
    expect((await replay.closed).close!.code).toBe(4401);
    first.send("\u0000\u0001 not json");
    expect((await first.closed).close!.code).toBe(1008);
  });
});
