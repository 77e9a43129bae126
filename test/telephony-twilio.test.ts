import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { like } from "drizzle-orm";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { heardDigits } from "./fakes/dtmf-ear.ts";
import { fromPhoneAudio } from "./fakes/phone-caller.ts";
import { twilioCall, twilioRings, twilioStream } from "./fakes/twilio-caller.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { freshPostgres, postgresAvailable } from "./helpers/postgres.ts";
import { realtimeProfile, recordsOf, until } from "./helpers/realtime.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { appCallOf, DIALED_FRAMES, PHONE_TURN, phoneLink, spokenSeconds, talkOver } from "./helpers/phone-calls.ts";
import { speak } from "./helpers/speech.ts";
import { bearer } from "./helpers/ws-client.ts";

// A Twilio number pointed at a realtime profile (docs/telephony.md): the fake Twilio signs and
// POSTs the voice webhook, reads the TwiML, opens the stream it names and speaks real speech
// (Flite, as µ-law at 8 kHz, paced at 20 ms); the profile is PocketSphinx → the ConversationRelay
// fake → Flite.

const app = startFakeApp();
let server: TestServer;
const AUTH_TOKEN = "twilio-auth-token-0123456789abcdef";

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => {
  server.stop(0);
  app.stop();
});

const link = (key: string, profileId: string, body: Record<string, unknown> = { carrier: "twilio", twilio_auth_token: AUTH_TOKEN }) => phoneLink(server, key, profileId, body);

/** A Twilio call to a new profile answered by the application at `path`, its stream begun. */
async function ringing(path: string) {
  const { key, tenantId } = await fundedAccount(server);
  const profileId = await realtimeProfile(server, key, app.url(path));
  const { body } = await link(key, profileId);
  const call = twilioCall();
  const answer = await twilioRings(body.webhook_url, AUTH_TOKEN, call);
  const stream = twilioStream(answer, call);
  await stream.begin(answer.stream!.parameters);
  return { key, tenantId, profileId, webhookUrl: body.webhook_url as string, call, answer, stream };
}

describe("phone links", () => {
  test("made, listed and revoked; the auth token is never returned, the webhook token is stored hashed", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await realtimeProfile(server, key, app.url("/echo"));
    const made = await link(key, profileId);
    expect(made.status).toBe(201);
    expect(Object.keys(made.body).sort()).toEqual(["carrier", "created_at", "id", "object", "profile_id", "webhook_url"]);
    expect(made.body).toMatchObject({ object: "realtime.phone_link", carrier: "twilio", profile_id: profileId });
    expect(made.body.webhook_url).toStartWith(`${server.url}/v1/telephony/calls/vxr_pl_`);
    expect(JSON.stringify(made.body)).not.toContain(AUTH_TOKEN);
    const token = made.body.webhook_url.split("/").at(-1);
    const { db, schema } = server.ctx.database;
    const rows = await db.select().from(schema.realtimePhoneLinks).where(like(schema.realtimePhoneLinks.id, made.body.id));
    expect(rows.length).toBe(1);
    expect(JSON.stringify(rows)).not.toContain(token);

    const listed = (await (await fetch(`${server.url}/v1/realtime/profiles/${profileId}/phone-links`, { headers: bearer(key) })).json()) as { items: Record<string, any>[] };
    expect(listed.items.map((l) => l.id)).toEqual([made.body.id]);
    expect(listed.items[0]!.webhook_url).toBeUndefined();
    expect(JSON.stringify(listed)).not.toContain(AUTH_TOKEN);

    const revoked = await fetch(`${server.url}/v1/realtime/phone-links/${made.body.id}`, { method: "DELETE", headers: bearer(key) });
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ id: made.body.id, deleted: true });
    expect((await fetch(`${server.url}/v1/realtime/phone-links/${made.body.id}`, { method: "DELETE", headers: bearer(key) })).status).toBe(404);
    // A revoked link's webhook is refused like a forged one.
    expect((await twilioRings(made.body.webhook_url, AUTH_TOKEN, twilioCall())).status).toBe(403);
  });

  test("bad bodies are refused in the native envelope, naming the parameter; another tenant's profile is 404", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await realtimeProfile(server, key, app.url("/echo"));
    const cases: [Record<string, unknown>, string][] = [
      [{}, "carrier"],
      [{ carrier: "plivo" }, "carrier"],
      [{ carrier: "twilio" }, "twilio_auth_token"],
      [{ carrier: "twilio", twilio_auth_token: 7 }, "twilio_auth_token"],
      [{ carrier: "telnyx", twilio_auth_token: AUTH_TOKEN }, "telnyx_public_key"],
      [{ carrier: "telnyx", telnyx_public_key: "not a key" }, "telnyx_public_key"],
    ];
    for (const [body, param] of cases) {
      const res = await link(key, profileId, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: "invalid_request", param });
    }
    const other = await fundedAccount(server);
    expect((await link(other.key, profileId)).status).toBe(404);
  });
});

describe.skipIf(!localSttAvailable)("a Twilio call", () => {
  test("the TwiML connects a bidirectional stream; the caller is heard, the answer comes back as µ-law with a mark, DTMF reaches the application, stop bills once", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const profileId = await realtimeProfile(server, key, app.url("/echo"));
    const { body } = await link(key, profileId);
    const call = twilioCall();
    const answer = await twilioRings(`${body.webhook_url}?campaign=spring`, AUTH_TOKEN, call);
    expect(answer.status).toBe(200);
    expect(answer.stream!.url).toBe(`${server.wsUrl("/v1/telephony/media/twilio")}`);
    const credential = answer.stream!.parameters.voxroute_credential!;
    expect(credential).toStartWith("vxr_cs_");

    const stream = twilioStream(answer, call);
    await stream.begin(answer.stream!.parameters);
    await stream.play(PHONE_TURN);
    await until(() => stream.sent("mark").length === 1, 20_000);
    const conn = appCallOf(app, call.callSid)!;
    expect(conn.received[0]).toMatchObject({ type: "setup", profileId, callSid: call.callSid, from: call.from, to: call.to, direction: "inbound", customParameters: { campaign: "spring" } });
    expect(JSON.stringify(conn.received[0])).not.toContain(credential);
    const prompt = conn.received.find((m) => m.type === "prompt" && m.last === true) as { voicePrompt: string };
    expect(prompt.voicePrompt.length).toBeGreaterThan(0);

    // Every frame 20 ms of µ-law (the last may be shorter), with the streamSid; the mark after them.
    const frames = stream.rec.frames.filter((f) => f.event === "media" || f.event === "mark");
    expect(frames.at(-1)).toEqual({ event: "mark", streamSid: stream.ids.streamId, mark: { name: expect.any(String) } });
    expect(stream.rec.media.slice(0, -1).every((m) => m.length === 160)).toBe(true);
    expect(stream.sent("media").every((f) => f.streamSid === stream.ids.streamId)).toBe(true);
    expect(spokenSeconds(fromPhoneAudio(Buffer.concat(stream.rec.media)))).toBeGreaterThan(0.5);

    stream.dtmf("5");
    await until(() => conn.received.some((m) => m.type === "dtmf"));
    expect(conn.received.filter((m) => m.type === "dtmf")).toEqual([{ type: "dtmf", digit: "5" }]);

    stream.stop();
    await stream.closed;
    const records = [...(await recordsOf(server, `call_${call.callSid}_%.stt`, 1)), ...(await recordsOf(server, `call_${call.callSid}_%.resp_1`, 1))];
    expect(records.map((r) => [r.tenantId, r.provider, r.surface, r.status])).toEqual([
      [tenantId, "pocketsphinx", "telephony", "completed"],
      [tenantId, "flite", "telephony", "completed"],
    ]);
    expect(records[0]!.usageAmount).toBeGreaterThanOrEqual(2);
    expect(records[1]!.usageAmount).toBe(`You said: ${prompt.voicePrompt}`.length);
    await Bun.sleep(300);
    expect((await recordsOf(server, `call_${call.callSid}_%`, 3)).length).toBe(2);
  }, 60_000);

  test("the caller talks over a long answer: clear, and the application's interrupt", async () => {
    const { call, stream } = await ringing("/long");
    await talkOver(app, call.callSid, stream);
    expect(stream.sent("clear")[0]).toEqual({ event: "clear", streamSid: stream.ids.streamId });
    // Sent faster than it plays, the first answer was all at Twilio already: `clear` drops what is left of it, and nothing of it follows.
    const afterClear = stream.rec.frames.slice(stream.rec.frames.findIndex((f) => f.event === "clear"));
    expect(afterClear.filter((f) => f.event === "mark").map((f) => f.mark.name)).not.toContain("resp_1");
    stream.stop();
    await stream.closed;
  }, 60_000);

  test("the application's end closes the stream normally", async () => {
    const { stream } = await ringing("/goodbye");
    void stream.play(PHONE_TURN);
    const rec = await stream.closed;
    expect(rec.close!.code).toBe(1000);
    expect(stream.sent("mark").length).toBe(1);
    // ffmpeg decodes the µ-law to speech as long as Flite's own reading of the answer.
    const heard = spokenSeconds(fromPhoneAudio(Buffer.concat(rec.media)));
    const expected = spokenSeconds(speak("Goodbye."));
    expect(Math.abs(heard - expected)).toBeLessThan(expected * 0.15);
  }, 60_000);
});

// The application's sendDigits: DTMF tones in the call's audio, heard by a Goertzel receiver written from ITU-T Q.23 (fakes/dtmf-ear.ts).
describe("digits the application sends", () => {
  test("the caller hears them as DTMF tones in 20 ms media frames", async () => {
    const { stream } = await ringing("/dialer");
    await until(() => stream.rec.media.length >= DIALED_FRAMES, 10_000);
    expect(stream.rec.media.every((m) => m.length === 160)).toBe(true);
    expect(stream.sent("media").every((f) => f.streamSid === stream.ids.streamId)).toBe(true);
    expect(heardDigits(Buffer.concat(stream.rec.media)).digits).toBe("1234#");
    stream.stop();
    await stream.closed;
  }, 30_000);

  test.skipIf(!localSttAvailable)(
    "digits sent before an answer play before it, whole; the answer's mark follows its own audio",
    async () => {
      const { stream } = await ringing("/digits");
      await stream.play(PHONE_TURN);
      await until(() => stream.sent("mark").length === 1, 20_000);
      expect(heardDigits(Buffer.concat(stream.rec.media.slice(0, DIALED_FRAMES))).digits).toBe("1234#");
      expect(heardDigits(Buffer.concat(stream.rec.media)).digits).toBe("1234#");
      expect(stream.rec.media.length).toBeGreaterThan(DIALED_FRAMES + 10);
      expect(stream.rec.frames.at(-1)!.event).toBe("mark");
      stream.stop();
      await stream.closed;
    },
    60_000,
  );
});

describe("refusals", () => {
  test("a wrong signature, a wrong token, a missing one: 403 before anything is minted", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const profileId = await realtimeProfile(server, key, app.url("/echo"));
    const { body } = await link(key, profileId);
    const call = twilioCall();
    expect((await twilioRings(body.webhook_url, "another-token", call)).status).toBe(403);
    expect((await twilioRings(body.webhook_url, AUTH_TOKEN, call, `${body.webhook_url}?x=1`)).status).toBe(403);
    expect((await twilioRings(body.webhook_url, AUTH_TOKEN, call, body.webhook_url, "")).status).toBe(403);
    expect((await twilioRings(`${server.url}/v1/telephony/calls/vxr_pl_unknown`, AUTH_TOKEN, call)).status).toBe(403);
    const res = await twilioRings(body.webhook_url, "another-token", call);
    expect(JSON.parse(res.body).error).toBe("invalid_signature");
    const { db, schema } = server.ctx.database;
    const secrets = await db.select().from(schema.realtimeClientSecrets).where(like(schema.realtimeClientSecrets.tenantId, tenantId));
    expect(secrets).toEqual([]);
  });

  test("a tenant out of balance is told so and hung up, with no stream", async () => {
    const { key } = await fundedAccount(server);
    const profileId = await realtimeProfile(server, key, app.url("/echo"));
    const { body } = await link(key, profileId);
    const broke = await fundedAccount(server, 0);
    const brokeProfile = await realtimeProfile(server, broke.key, app.url("/echo"));
    const brokeLink = await link(broke.key, brokeProfile);
    const answer = await twilioRings(brokeLink.body.webhook_url, AUTH_TOKEN, twilioCall());
    expect(answer.status).toBe(200);
    expect(answer.stream).toBeUndefined();
    expect(answer.says).toContain("credit");
    expect(answer.hangsUp).toBe(true);
    expect((await twilioRings(body.webhook_url, AUTH_TOKEN, twilioCall())).stream).toBeDefined();
  });

  test("a replayed credential, a stream without start, garbage frames: closed, nothing billed", async () => {
    const { tenantId, webhookUrl, call, answer, stream: first } = await ringing("/echo");
    await until(() => appCallOf(app, call.callSid) !== undefined);
    const replay = twilioStream(answer, call);
    await replay.begin(answer.stream!.parameters);
    expect((await replay.closed).close!.code).toBe(4401);
    first.stop();
    await first.closed;

    const silent = twilioStream(answer, call);
    await new Promise((r) => (silent.ws.onopen = r));
    silent.send({ event: "connected", protocol: "Call", version: "1.0.0" });
    expect((await silent.closed).close!.code).toBe(1008);

    const early = twilioStream(answer, call);
    await new Promise((r) => (early.ws.onopen = r));
    void early.play(PHONE_TURN.subarray(0, 160));
    expect((await early.closed).close!.code).toBe(1008);

    const freshCall = twilioCall();
    const fresh = await twilioRings(webhookUrl, AUTH_TOKEN, freshCall);
    const garbage = twilioStream(fresh, freshCall);
    await new Promise((r) => (garbage.ws.onopen = r));
    garbage.send("this is not a carrier frame");
    expect((await garbage.closed).close!.code).toBe(1008);
    // The garbage stream never spent its credential: it still opens a call once.
    const later = twilioStream(fresh, freshCall);
    await later.begin(fresh.stream!.parameters);
    await until(() => appCallOf(app, freshCall.callSid) !== undefined);
    later.stop();
    await later.closed;

    const { db, schema } = server.ctx.database;
    await Bun.sleep(200);
    const billed = await db.select().from(schema.activity).where(like(schema.activity.tenantId, tenantId));
    expect(billed.filter((r) => r.usageAmount > 0)).toEqual([]);
  }, 30_000);

  test("behind a proxy, the signature is over PUBLIC_URL's address, not the router's own", async () => {
    const proxied = await startTestServer({ PUBLIC_URL: "https://phones.example.com" });
    try {
      const { key } = await fundedAccount(proxied);
      const profileId = await realtimeProfile(proxied, key, app.url("/echo"));
      const res = await fetch(`${proxied.url}/v1/realtime/profiles/${profileId}/phone-links`, {
        method: "POST",
        headers: { ...bearer(key), "content-type": "application/json" },
        body: JSON.stringify({ carrier: "twilio", twilio_auth_token: AUTH_TOKEN }),
      });
      const { webhook_url } = (await res.json()) as { webhook_url: string };
      expect(webhook_url).toStartWith("https://phones.example.com/v1/telephony/calls/");
      const local = webhook_url.replace("https://phones.example.com", proxied.url);
      expect((await twilioRings(local, AUTH_TOKEN, twilioCall())).status).toBe(403);
      const answer = await twilioRings(local, AUTH_TOKEN, twilioCall(), webhook_url);
      expect(answer.status).toBe(200);
      expect(answer.stream!.url).toBe("wss://phones.example.com/v1/telephony/media/twilio");
    } finally {
      proxied.stop(0);
    }
  });
});

describe.skipIf(!postgresAvailable)("on PostgreSQL", () => {
  test("a link is made, its signed webhook answered with a stream, and once revoked refused", async () => {
    const fresh = await freshPostgres();
    const pg = await startTestServer({ DATABASE_URL: fresh.url });
    try {
      const profileId = await realtimeProfile(pg, pg.key, app.url("/echo"));
      const made = await phoneLink(pg, pg.key, profileId, { carrier: "twilio", twilio_auth_token: AUTH_TOKEN });
      expect(made.status).toBe(201);
      expect((await twilioRings(made.body.webhook_url, AUTH_TOKEN, twilioCall())).stream).toBeDefined();
      expect((await twilioRings(made.body.webhook_url, "another-token", twilioCall())).status).toBe(403);
      expect((await fetch(`${pg.url}/v1/realtime/phone-links/${made.body.id}`, { method: "DELETE", headers: bearer(pg.key) })).status).toBe(200);
      expect((await twilioRings(made.body.webhook_url, AUTH_TOKEN, twilioCall())).status).toBe(403);
    } finally {
      pg.stop(0);
      await fresh.drop();
    }
  });
});
