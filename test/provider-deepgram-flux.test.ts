import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram, type FakeDeepgram } from "./fakes/deepgram.ts";
import { speech } from "./fakes/http-fake.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { deepgramAt } from "./fakes/server-env.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { UPSTREAM_TIMEOUTS } from "./helpers/http-tts.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { describeSttFaults } from "./helpers/stt-faults.ts";
import { bearer, connect, type Client } from "./helpers/ws-client.ts";

// Deepgram Flux (semantic turns, v2/listen) against its fake, through /v1/stt. The fake finds
// turns in the audio itself: Flite speech is heard, silence ends turns.

let fake: FakeDeepgram;
let server: TestServer;
beforeAll(async () => {
  fake = startFakeDeepgram();
  server = await startTestServer({ ...deepgramAt(fake), UPSTREAM_IDLE_TIMEOUT_MS: String(UPSTREAM_TIMEOUTS.idleTimeoutMs) });
});
afterAll(() => stopServerAndFakes(server, fake));

const FLUX = "model=flux-general-en&audio_format=pcm_16000";
const silence = (seconds: number) => new Uint8Array(32_000 * seconds);
/** "thank you" and "very much" with Flite's own 0.4 s pause between them: long enough for an eager guess, too short to end the turn. */
const pausedPhrase = () => [speech("thank you", 16000), speech("very much", 16000)];

async function until(c: Client, done: (events: Record<string, any>[]) => boolean) {
  for (let i = 0; i < 200 && !done(c.rec.events); i++) await Bun.sleep(10);
}

const upgradeRefusal = (query: string) =>
  fetch(`${server.url}/v1/stt?${query}`, {
    headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
  });

describe("Deepgram Flux through /v1/stt", () => {
  test("semantic turns: eager_end and resumed, finals, provider commits; options translated on the wire", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(
      server.wsUrl(
        `/v1/stt?${FLUX}&interim_results=true&eager_end_threshold=0.5&turn_threshold=0.8&turn_timeout_ms=3000&keyterms=voxroute&keyterms=deepgram&language=en-US&provider_options[mip_opt_out]=true`,
      ),
      bearer(key),
    );
    await c.opened;
    const sent = [...pausedPhrase(), silence(1), speech("for your help", 16000), silence(1)];
    for (const audio of sent) c.ws.send(audio);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });

    const wire = fake.flux.at(-1)!;
    expect(wire.received.digest()).toEqual(digestOf(sent)); // all of it, in order, as sent
    expect(Object.fromEntries(wire.query)).toEqual({
      model: "flux-general-en",
      encoding: "linear16",
      sample_rate: "16000",
      eot_threshold: "0.8",
      eager_eot_threshold: "0.5",
      eot_timeout_ms: "3000",
      keyterm: "deepgram",
      mip_opt_out: "true",
    });
    expect(wire.query.getAll("keyterm")).toEqual(["voxroute", "deepgram"]);
    expect(wire.authorization).toBe(`Token ${FAKE_DEEPGRAM_KEY}`);
    expect(wire.texts).toEqual(['{"type":"CloseStream"}']);

    const ev = rec.events;
    expect(ev[0]).toMatchObject({
      type: "stt.session.started",
      provider: "deepgram",
      model: "deepgram/flux-general-en",
      input_config: { turn_detection: "semantic", turn_detector: "provider", interim_results: true },
    });
    const signals = (turn: string) => ev.filter((e) => e.type === "stt.signal" && e.turn_id === turn);
    expect(signals("turn_1").map((e) => e.signal)).toEqual(["started", "eager_end", "resumed", "eager_end", "end"]);
    expect(signals("turn_2").map((e) => e.signal)).toEqual(["started", "eager_end", "end"]);
    for (const s of signals("turn_1")) expect(s).toMatchObject({ origin: "provider", turn_scope: "turn", basis: ["provider"] });
    expect(ev.some((e) => e.type === "stt.transcript.interim" && e.turn_id === "turn_1")).toBe(true);
    for (const turn of ["turn_1", "turn_2"]) {
      const committed = ev.findIndex((e) => e.type === "stt.audio.committed" && e.turn_id === turn);
      expect(ev[committed]).toMatchObject({ origin: "provider" });
      expect(ev[committed - 1]).toMatchObject({ type: "stt.signal", signal: "end", turn_id: turn });
      expect(ev[committed - 2]).toMatchObject({ type: "stt.transcript.final", turn_id: turn });
    }
    const first = ev.find((e) => e.type === "stt.transcript.final")!;
    expect(first.text).toMatch(/^thank you/);
    expect(first.audio_start_ms).toBeGreaterThan(200);
    expect(first.audio_end_ms).toBeGreaterThan(first.audio_start_ms);
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "deepgram", usageUnit: "seconds", usageAmount: Math.ceil(wire.audioBytes / 32_000), status: "completed" });
  });

  test("interim transcripts are off unless asked for (the semantic-only family's default)", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${FLUX}`), bearer(server.key));
    await c.opened;
    for (const audio of [speech("thank you very much", 16000), silence(1)]) c.ws.send(audio);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.events[0].input_config).toMatchObject({ interim_results: false, turn_detection: "semantic" });
    expect(rec.events.some((e) => e.type === "stt.transcript.interim")).toBe(false);
    expect(rec.events.map((e) => e.type)).toContain("stt.transcript.final");
    expect(fake.flux.at(-1)!.query.has("eager_eot_threshold")).toBe(false);
  });

  test("a client commit ends the turn with ForceEndTurn; with no turn open it is acknowledged at once; a clear drops the turn", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${FLUX}`), bearer(server.key));
    await c.opened;
    c.ws.send(silence(0.5));
    c.send({ type: "stt.audio.commit" });
    c.ws.send(speech("thank you very much", 16000));
    await until(c, (ev) => ev.some((e) => e.type === "stt.signal" && e.turn_id === "turn_2"));
    c.send({ type: "stt.audio.commit" });
    await until(c, (ev) => ev.some((e) => e.type === "stt.audio.committed" && e.turn_id === "turn_2"));
    c.ws.send(speech("for your help", 16000));
    await until(c, (ev) => ev.some((e) => e.type === "stt.signal" && e.turn_id === "turn_3"));
    c.send({ type: "stt.audio.clear" });
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(fake.flux.at(-1)!.texts).toEqual(['{"type":"ForceEndTurn"}', '{"type":"ForceEndTurn"}', '{"type":"CloseStream"}']);

    const ev = rec.events.filter((e) => e.type !== "stt.session.started" && e.type !== "stt.session.ended");
    expect(ev.map((e) => [e.type, e.turn_id, e.signal ?? e.origin])).toEqual([
      ["stt.audio.committed", "turn_1", "client"],
      ["stt.signal", "turn_2", "started"],
      ["stt.transcript.final", "turn_2", undefined],
      ["stt.signal", "turn_2", "end"],
      ["stt.audio.committed", "turn_2", "client"],
      ["stt.signal", "turn_3", "started"],
      ["stt.audio.cleared", "turn_3", undefined],
    ]);
    expect(ev[2].text).toMatch(/^thank you/);
  });

  test("a commit or clear while a ForceEndTurn is on its way: one ForceEndTurn, each answered in order, the commit's final kept", async () => {
    for (const second of ["commit", "clear"]) {
      const c = connect(server.wsUrl(`/v1/stt?${FLUX}&commit_strategy=manual`), bearer(server.key));
      await c.opened;
      c.ws.send(speech("thank you very much", 16000));
      await until(c, (ev) => ev.some((e) => e.type === "stt.signal" && e.signal === "started"));
      c.send({ type: "stt.audio.commit" });
      c.send({ type: `stt.audio.${second}` });
      await until(c, (ev) => ev.some((e) => e.type === (second === "commit" ? "stt.audio.committed" : "stt.audio.cleared") && e.turn_id === "turn_2"));
      c.send({ type: "stt.session.close" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
      expect(fake.flux.at(-1)!.texts).toEqual(['{"type":"ForceEndTurn"}', '{"type":"CloseStream"}']);
      const ev = rec.events.filter((e) => e.type !== "stt.session.started" && e.type !== "stt.session.ended");
      expect(ev.map((e) => [e.type, e.turn_id, e.signal ?? e.origin])).toEqual([
        ["stt.signal", "turn_1", "started"],
        ["stt.transcript.final", "turn_1", undefined],
        ["stt.signal", "turn_1", "end"],
        ["stt.audio.committed", "turn_1", "client"],
        second === "commit" ? ["stt.audio.committed", "turn_2", "client"] : ["stt.audio.cleared", "turn_2", undefined],
      ]);
      expect(ev[1].text).toMatch(/^thank you/);
    }
  });

  test("flux-general-multi sends the language as language_hint", async () => {
    const c = connect(server.wsUrl("/v1/stt?model=flux-general-multi&audio_format=pcm_16000&language=de"), bearer(server.key));
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(fake.flux.at(-1)!.query.getAll("language_hint")).toEqual(["de"]);
  });

  test("flux-general-en refuses another language before connecting", async () => {
    const before = fake.flux.length;
    const c = connect(server.wsUrl(`/v1/stt?${FLUX}&language=fr`), bearer(server.key));
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)).toMatchObject({ type: "stt.error", message: "deepgram flux-general-en recognizes English only, not fr (flux-general-multi takes language hints)" });
    expect(fake.flux.length).toBe(before);
  });

  test("acoustic turns, options outside Deepgram's ranges and options Flux lacks are refused before the upgrade", async () => {
    const cases: [string, string][] = [
      [`${FLUX}&turn_detection=acoustic`, "turn_detection"],
      [`${FLUX}&turn_threshold=0.3`, "turn_threshold"],
      [`${FLUX}&eager_end_threshold=0.95`, "eager_end_threshold"],
      [`${FLUX}&turn_timeout_ms=100`, "turn_timeout_ms"],
      [`${FLUX}&diarization=true`, "diarization"],
      ["model=flux-general-en&audio_format=pcm_22050", "audio_format"],
    ];
    for (const [query, param] of cases) {
      const res = await upgradeRefusal(query);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ param });
    }
    const res = await upgradeRefusal(`${FLUX}&turn_threshold=0.4`);
    expect(await res.json()).toMatchObject({ error: "unsupported_stt_option", message: "turn_threshold: must be from 0.5 to 1 for this family (deepgram-flux)" });
  });

  test("event_format=provider relays Flux's own frames byte for byte", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${FLUX}&event_format=provider`), bearer(server.key));
    await c.opened;
    c.ws.send(speech("thank you very much", 16000));
    await until(c, (ev) => ev.some((e) => e.event === "StartOfTurn"));
    c.ws.send('{"type": "ForceEndTurn"}');
    c.ws.send('{"type":"CloseStream"}');
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(fake.flux.at(-1)!.texts).toEqual(['{"type": "ForceEndTurn"}', '{"type":"CloseStream"}']);
    expect(rec.events[0]).toMatchObject({ type: "Connected", sequence_id: 0 });
    expect(rec.events.at(-1)).toMatchObject({ type: "TurnInfo", event: "EndOfTurn", trigger: "manual" });
    expect(rec.events.map((e) => e.sequence_id)).toEqual(rec.events.map((_, i) => i));
  });

  describeSttFaults("Deepgram Flux", {
    server: () => server,
    fake: () => fake,
    query: FLUX,
    provider: "deepgram",
    faults: [
      ["stall", "a stalled upstream"],
      ["error-frame", "a fatal Error frame"],
      ["data-error", "closed 1008 DATA-0000"],
    ],
    messages: { "error-frame": "deepgram flux failed: INTERNAL_SERVER_ERROR The server encountered an internal error." },
  });

  test("a failure after a final: billed up to that final", async () => {
    const { key, tenantId } = await fundedAccount(server);
    fake.fault("drop");
    const c = connect(server.wsUrl(`/v1/stt?${FLUX}`), bearer(key));
    await c.opened;
    c.ws.send(speech("thank you", 16000));
    c.ws.send(silence(1));
    c.ws.send(silence(1));
    const rec = await c.closed;
    expect(rec.close.code).toBe(1011);
    expect(rec.events.some((e) => e.type === "stt.transcript.final")).toBe(true);
    expect(await lastActivity(server, tenantId)).toMatchObject({ status: "failed", usageAmount: 2 });
  });
});
