import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { heardDigits } from "./fakes/dtmf-ear.ts";
import type { PhoneStream } from "./fakes/phone-caller.ts";
import { telnyxAccount, telnyxCall, telnyxRings, telnyxStream } from "./fakes/telnyx-caller.ts";
import { twilioCall, twilioRings, twilioStream } from "./fakes/twilio-caller.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { appCallOf, PHONE_TURN, phoneLink } from "./helpers/phone-calls.ts";
import { realtimeProfile, until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// The application's sendDigits on a phone call: played in-band as DTMF tones, µ-law 8 kHz in
// 20 ms `media` frames, after the audio already given to the call. The caller hears them with a
// Goertzel receiver written from ITU-T Q.23 (fakes/dtmf-ear.ts).

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

const AUTH_TOKEN = "twilio-auth-token-digits";

async function twilioCalls(path: string): Promise<PhoneStream> {
  const { key } = await fundedAccount(server);
  const profileId = await realtimeProfile(server, key, app.url(path));
  const { body } = await phoneLink(server, key, profileId, { carrier: "twilio", twilio_auth_token: AUTH_TOKEN });
  const call = twilioCall();
  const answer = await twilioRings(body.webhook_url, AUTH_TOKEN, call);
  const stream = twilioStream(answer, call);
  await stream.begin(answer.stream!.parameters);
  await until(() => appCallOf(app, call.callSid) !== undefined);
  return stream;
}

async function telnyxCalls(path: string): Promise<PhoneStream> {
  const { key } = await fundedAccount(server);
  const profileId = await realtimeProfile(server, key, app.url(path));
  const { body } = await phoneLink(server, key, profileId, { carrier: "telnyx", telnyx_public_key: account.publicKey });
  const call = telnyxCall();
  const answer = await telnyxRings(body.webhook_url, account, call);
  const stream = telnyxStream(answer, call);
  await stream.begin(answer.stream!.parameters);
  return stream;
}

/** "1234#" is 5 × (100 ms tone + 100 ms gap): 50 frames of 20 ms. */
const DIALED_FRAMES = 50;

describe("the application's sendDigits on a phone call", () => {
  for (const [carrier, calls] of [
    ["Twilio", twilioCalls],
    ["Telnyx", telnyxCalls],
  ] as const)
    test(`${carrier}: the caller hears the digits as DTMF tones in 20 ms media frames`, async () => {
      const stream = await calls("/dialer");
      await until(() => stream.rec.media.length >= DIALED_FRAMES, 10_000);
      expect(stream.rec.media.every((m) => m.length === 160)).toBe(true);
      expect(heardDigits(Buffer.concat(stream.rec.media)).digits).toBe("1234#");
      stream.stop();
      await stream.closed;
    }, 30_000);

  test.skipIf(!localSttAvailable)(
    "digits sent before an answer play before it, whole; the answer's mark follows its own audio",
    async () => {
      const stream = await twilioCalls("/digits");
      await stream.play(PHONE_TURN);
      await until(() => stream.sent("mark").length === 1, 20_000);
      const tones = Buffer.concat(stream.rec.media.slice(0, DIALED_FRAMES));
      expect(heardDigits(tones).digits).toBe("1234#");
      expect(heardDigits(Buffer.concat(stream.rec.media)).digits).toBe("1234#");
      expect(stream.rec.media.length).toBeGreaterThan(DIALED_FRAMES + 10);
      expect(stream.rec.frames.at(-1)!.event).toBe("mark");
      stream.stop();
      await stream.closed;
    },
    60_000,
  );
});
