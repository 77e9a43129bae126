import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { desc, eq } from "drizzle-orm";
import { createKey } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, frames, silence, speak, spokenSpans } from "./helpers/speech.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// /v1/stt with the embedded recognizer: speech made by our own Flite, streamed through a real
// socket, recognized by PocketSphinx, turns decided by the router VAD.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

const stt = (query: string) => server.wsUrl(`/v1/stt?${query}`);
const MODEL = "model=pocketsphinx-en-us&audio_format=pcm_16000";

/** Streams 20 ms frames in real time (paced), then asks to close. */
async function stream(c: ReturnType<typeof connect>, pcm: Int16Array, realTime = true) {
  await c.opened;
  for (const f of frames(pcm)) {
    c.ws.send(f);
    if (realTime) await Bun.sleep(20);
  }
}

describe.skipIf(!localSttAvailable)("/v1/stt with the local recognizer", () => {
  test("round trip: Flite speech in real time → router turns, interim and final transcripts, gapless events", async () => {
    const c = connect(stt(MODEL), bearer(server.key));
    const pieces = [silence(500), speak("Thank you very much for your help."), silence(900)];
    const [[speechStart, speechEnd]] = spokenSpans(pieces);
    await stream(c, concat(pieces));
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
    const ev = rec.events;
    expect(ev[0]).toMatchObject({
      type: "stt.session.started",
      provider: "pocketsphinx",
      model: "cmu/pocketsphinx-en-us",
      input_config: { audio_format: "pcm_16000", interim_results: true, commit_strategy: "auto", turn_detection: "acoustic" },
    });
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    expect(new Set(ev.map((e) => e.event_id)).size).toBe(ev.length);

    const types = ev.map((e) => e.type);
    expect(types.filter((t) => t === "stt.transcript.interim").length).toBeGreaterThan(0);
    const started = ev.find((e) => e.type === "stt.signal" && e.signal === "started")!;
    expect(started).toMatchObject({ origin: "router", turn_scope: "utterance", basis: ["vad"], turn_id: "turn_1" });
    expect(Math.abs(started.audio_ms - speechStart)).toBeLessThanOrEqual(150);
    expect(Math.abs(ev.find((e) => e.type === "stt.signal" && e.signal === "end")!.audio_ms - speechEnd)).toBeLessThanOrEqual(150);
    const final = ev.find((e) => e.type === "stt.transcript.final")!;
    expect(final).toMatchObject({ turn_id: "turn_1", text: "thank you very much for your help" });
    // The turn's interims, final, end signal and commit share its id; the commit follows the end signal.
    const turn1 = ev.filter((e) => e.turn_id === "turn_1").map((e) => (e.type === "stt.signal" ? `signal:${e.signal}` : e.type));
    expect(turn1.slice(-3)).toEqual(["stt.transcript.final", "signal:end", "stt.audio.committed"]);
    expect(ev.find((e) => e.type === "stt.audio.committed")).toMatchObject({ origin: "router" });
    expect(ev.at(-1)).toMatchObject({ type: "stt.session.ended", billed_seconds: 4 });
  }, 20_000);

  test("audio sent before the session is ready is kept and transcribed", async () => {
    const c = connect(stt(MODEL), bearer(server.key));
    await c.opened;
    for (const f of frames(concat([speak("I would like a cup of coffee."), silence(700)]))) c.ws.send(f); // all at once, at open
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events.filter((e) => e.type === "stt.transcript.final").map((e) => e.text)).toEqual(["i would like a cup of coffee"]);
  });

  test("manual commit and clear: only what the client commits is transcribed", async () => {
    const c = connect(stt(`${MODEL}&commit_strategy=manual&interim_results=false`), bearer(server.key));
    await stream(c, speak("Good morning everyone."), false);
    c.send({ type: "stt.audio.commit" });
    await stream(c, speak("This part is cleared."), false);
    c.send({ type: "stt.audio.clear" });
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    const ev = rec.events.filter((e) => e.type !== "stt.signal");
    expect(ev.map((e) => e.type)).toEqual(["stt.session.started", "stt.transcript.final", "stt.audio.committed", "stt.audio.cleared", "stt.session.ended"]);
    expect(ev[1]).toMatchObject({ text: "good morning everyone", turn_id: "turn_1" });
    expect(ev[2]).toMatchObject({ origin: "client", turn_id: "turn_1" });
    expect(ev[3]).toMatchObject({ turn_id: "turn_2" });
    expect(rec.events[0].input_config.interim_results).toBe(false);
  });

  test("a text frame that is not a command closes with 1003 invalid_stt_frame", async () => {
    const c = connect(stt(MODEL), bearer(server.key));
    await c.opened;
    c.send({ type: "stt.audio.flush" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1003, reason: "invalid_stt_frame" });
    expect(rec.events.at(-1)).toMatchObject({ type: "stt.error", code: "invalid_stt_frame" });
  });

  test("usage: one activity record per session, audio seconds rounded up; 402 before the upgrade when nothing can pay", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `stt-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    const c = connect(stt(MODEL), bearer(key));
    await stream(c, silence(2300), false);
    c.send({ type: "stt.session.close" });
    expect((await c.closed).close.code).toBe(1000);
    const { db, schema } = server.ctx.database;
    const [record] = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId)).orderBy(desc(schema.activity.startedAt));
    expect(record).toMatchObject({ capability: "stt", provider: "pocketsphinx", usageUnit: "seconds", usageAmount: 3, credits: 30 });

    const { key: broke } = await createKey(server.ctx.database, `stt-broke-${crypto.randomUUID()}`);
    const res = await fetch(`${server.url}/v1/stt?${MODEL}`, {
      headers: { ...bearer(broke), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(402);
  });

  test("audio sent before admission is paid for before it goes anywhere: too little balance → 4402", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `stt-early-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 25, type: "adjustment", description: "test" }); // 2 s
    const c = connect(stt(MODEL), bearer(key));
    await c.opened;
    for (const f of frames(silence(5000))) c.ws.send(f); // 5 s at once, while the session is being admitted
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "insufficient_balance" }) });
    const bal = (await server.ctx.meter.ledger.snapshot(tenantId)).balance;
    expect(bal.paidCredits).toBeGreaterThanOrEqual(0);
    expect(bal.paidHeld).toBe(0);
  });

  test("a balance that covers no audio at all: 4402, recorded failed and unbilled", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `stt-none-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 10, type: "adjustment", description: "test" }); // admitted, but a second needs 11
    const c = connect(stt(MODEL), bearer(key));
    await c.opened;
    for (const f of frames(silence(1000))) c.ws.send(f);
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "insufficient_balance" }) });
    const { db, schema } = server.ctx.database;
    expect(await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId))).toMatchObject([{ status: "failed", usageAmount: 0, credits: 0 }]);
    expect((await server.ctx.meter.ledger.snapshot(tenantId)).balance).toMatchObject({ paidCredits: 10, paidHeld: 0 });
  });

  test("a client that just goes away is still billed for the audio it sent", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `stt-gone-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    const c = connect(stt(MODEL), bearer(key));
    await stream(c, silence(1500), false);
    await Bun.sleep(200);
    c.ws.close();
    const { db, schema } = server.ctx.database;
    let records: { usageAmount: number }[] = [];
    for (let i = 0; i < 50 && records.length === 0; i++) {
      await Bun.sleep(20);
      records = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId));
    }
    expect(records).toEqual([expect.objectContaining({ usageAmount: 2, status: "completed" })]);
  });
});

describe.skipIf(!localSttAvailable)("/v1/stt query rules (answered before the upgrade)", () => {
  async function upgrade(query: string) {
    const res = await fetch(`${server.url}/v1/stt?${query}`, {
      headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const cases: [string, string, string?][] = [
    ["audio_format=pcm_16000", "model_required"],
    ["channels=0", "model_required"],
    ["model=pocketsphinx-en-us", "invalid_request", "audio_format"],
    ["model=pocketsphinx-en-us&audio_format=pcm_11025", "invalid_request", "audio_format"],
    [`${MODEL}&colour=blue`, "invalid_request", "colour"],
    [`${MODEL}&speech_threshold=1.5`, "invalid_request", "speech_threshold"],
    [`${MODEL}&silence_duration_ms=-1`, "invalid_request", "silence_duration_ms"],
    [`${MODEL}&interim_results=yes`, "invalid_request", "interim_results"],
    [`${MODEL}&commit_strategy=sometimes`, "invalid_request", "commit_strategy"],
    [`${MODEL}&channels=0`, "invalid_request", "channels"],
    ["model=pocketsphinx-en-us&audio_format=pcm_8000", "invalid_request", "audio_format"],
    [`${MODEL}&keyterms=voxroute`, "unsupported_stt_option", "keyterms"],
    [`${MODEL}&diarization=true`, "unsupported_stt_option", "diarization"],
    [`${MODEL}&turn_threshold=0.5`, "unsupported_stt_option", "turn_threshold"],
    [`${MODEL}&turn_detection=semantic`, "unsupported_stt_option", "turn_detection"],
    [`${MODEL}&event_format=provider`, "unsupported_stt_option", "event_format"],
    [`${MODEL}&provider_options[samprate]=8000`, "conflicting_audio_format", "provider_options"],
  ];
  for (const [query, error, param] of cases) {
    test(`${query} → 400 ${error}`, async () => {
      const { status, body } = await upgrade(query);
      expect({ status, error: body.error, param: body.param }).toEqual({ status: 400, error, param });
    });
  }

  test("portable options the family honours, and an agreeing native declaration, are accepted", async () => {
    const c = connect(stt(`${MODEL}&speech_threshold=0.6&silence_duration_ms=400&language=en-US&turn_detection=acoustic&provider_options[samprate]=16000`), bearer(server.key));
    await c.opened;
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(rec.events[0]).toMatchObject({ type: "stt.session.started", input_config: { language: "en-US", turn_detection: "acoustic" } });
  });

  test("a plain GET answers 426", async () => {
    expect((await fetch(`${server.url}/v1/stt?${MODEL}`)).status).toBe(426);
  });
});
