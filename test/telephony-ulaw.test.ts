import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { type FakeDeepgram, startFakeDeepgram } from "./fakes/deepgram.ts";
import { deepgramAt } from "./fakes/server-env.ts";
import { telnyxAccount, telnyxCall, telnyxRings, telnyxStream } from "./fakes/telnyx-caller.ts";
import { twilioCall, twilioRings, twilioStream } from "./fakes/twilio-caller.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { PHONE_TURN, phoneLink } from "./helpers/phone-calls.ts";
import { realtimeProfile, recordsOf, until } from "./helpers/realtime.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";

// A profile whose STT model takes µ-law (Deepgram Nova, its fake here) hears a phone call as the
// carrier sent it: the recognizer is asked for `mulaw` at 8 kHz and gets the caller's bytes
// themselves, nothing decoded or resampled on the way, in the order the carrier numbered them.

const app = startFakeApp();
let deepgram: FakeDeepgram;
let server: TestServer;

beforeAll(async () => {
  deepgram = startFakeDeepgram();
  server = await startTestServer(deepgramAt(deepgram));
});
afterAll(() => stopServerAndFakes(server, deepgram, app));

test("the caller's µ-law reaches a µ-law recognizer byte for byte", async () => {
  const { key, tenantId } = await fundedAccount(server);
  const profileId = await realtimeProfile(server, key, app.url("/echo"), { stt: { model: "nova-3" } });
  const { body } = await phoneLink(server, key, profileId, { carrier: "twilio", twilio_auth_token: "token" });
  const call = twilioCall();
  const answer = await twilioRings(body.webhook_url, "token", call);
  const stream = twilioStream(answer, call);
  await stream.begin(answer.stream!.parameters);
  await stream.play(PHONE_TURN);
  const listen = () => deepgram.connections.find((c) => c.authorization !== null && c.received.digest().bytes > 0);
  await until(() => listen()?.received.digest().bytes === PHONE_TURN.length, 10_000);
  expect(Object.fromEntries(["encoding", "sample_rate"].map((k) => [k, listen()!.query.get(k)]))).toEqual({ encoding: "mulaw", sample_rate: "8000" });
  expect(listen()!.received.digest().sha256).toBe(createHash("sha256").update(PHONE_TURN).digest("hex"));
  stream.stop();
  await stream.closed;
  const [heard] = await recordsOf(server, `call_${call.callSid}_%.stt`, 1);
  expect(heard).toMatchObject({ tenantId, provider: "deepgram", surface: "telephony" });
}, 30_000);

test("Telnyx frames that arrive out of order reach the recognizer in their chunk order", async () => {
  const { key } = await fundedAccount(server);
  const profileId = await realtimeProfile(server, key, app.url("/echo"), { stt: { model: "nova-3" } });
  const account = telnyxAccount();
  const { body } = await phoneLink(server, key, profileId, { carrier: "telnyx", telnyx_public_key: account.publicKey });
  const call = telnyxCall();
  const earlier = deepgram.connections.length;
  const answer = await telnyxRings(body.webhook_url, account, call);
  const stream = telnyxStream(answer, call);
  await stream.begin(answer.stream!.parameters);
  await stream.play(PHONE_TURN, { swapped: true });
  const listen = () => deepgram.connections.slice(earlier).find((c) => c.authorization !== null && c.received.digest().bytes > 0);
  await until(() => listen()?.received.digest().bytes === PHONE_TURN.length, 10_000);
  expect(listen()!.received.digest().sha256).toBe(createHash("sha256").update(PHONE_TURN).digest("hex"));
  stream.stop();
  await stream.closed;
}, 30_000);
