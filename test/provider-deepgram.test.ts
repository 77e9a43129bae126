import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FAKE_DEEPGRAM_KEY, startFakeDeepgram, type FakeDeepgram } from "./fakes/deepgram.ts";
import { speech } from "./fakes/http-fake.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { deepgramAt } from "./fakes/server-env.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { silentWav } from "./helpers/speech-file.ts";
import { describeSttFaults } from "./helpers/stt-faults.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// Deepgram Nova streaming STT against its fake, through /v1/stt.

let fake: FakeDeepgram;
let server: TestServer;
beforeAll(async () => {
  fake = startFakeDeepgram();
  server = await startTestServer(deepgramAt(fake));
});
afterAll(() => stopServerAndFakes(server, fake));

const NOVA = "model=nova-3&audio_format=pcm_16000";
const second = () => new Uint8Array(32_000);
/** Real speech, cut into `count` seconds (each with sound in it: the fake hears digital silence as nothing). */
const spokenSeconds = (count: number) => {
  const pcm = speech("Thank you very much for your help. I would like a cup of coffee, please.", 16000);
  return Array.from({ length: count }, (_, i) => pcm.slice(i * 32_000, (i + 1) * 32_000));
};

describe("Deepgram Nova through /v1/stt", () => {
  test("provider signals, interim and final transcripts, a client commit; options translated on the wire", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(server.wsUrl(`/v1/stt?${NOVA}&language=en&keyterms=voxroute&keyterms=deepgram&silence_duration_ms=300&formatting=true&provider_options[tier]=enhanced`), bearer(key));
    await c.opened;
    const audio = spokenSeconds(3);
    c.ws.send(audio[0]!);
    c.ws.send(audio[1]!);
    c.send({ type: "stt.audio.commit" });
    c.ws.send(audio[2]!);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
    expect(fake.connections.at(-1)!.received.digest()).toEqual(digestOf(audio)); // all of it, in order, as sent

    const q = fake.connections.at(-1)!.query;
    expect(Object.fromEntries(q)).toMatchObject({
      model: "nova-3",
      encoding: "linear16",
      sample_rate: "16000",
      channels: "1",
      language: "en",
      endpointing: "300",
      smart_format: "true",
      interim_results: "true",
      vad_events: "true",
      tier: "enhanced",
    });
    expect(q.getAll("keyterm")).toEqual(["voxroute", "deepgram"]);
    expect(fake.connections.at(-1)!.authorization).toBe(`Token ${FAKE_DEEPGRAM_KEY}`);
    expect(fake.connections.at(-1)!.texts).toEqual(['{"type":"Finalize"}', '{"type":"CloseStream"}']);

    const ev = rec.events;
    expect(ev[0]).toMatchObject({ type: "stt.session.started", provider: "deepgram", input_config: { turn_detector: "provider", interim_results: true } });
    expect(ev.find((e) => e.type === "stt.signal")).toMatchObject({ origin: "provider", signal: "started", basis: ["provider"], turn_id: "turn_1" });
    expect(ev.some((e) => e.type === "stt.transcript.interim")).toBe(true);
    const committed = ev.findIndex((e) => e.type === "stt.audio.committed");
    expect(ev[committed]).toMatchObject({ origin: "client", turn_id: "turn_1" });
    expect(ev[committed - 1]).toMatchObject({ type: "stt.transcript.final", turn_id: "turn_1" });
    expect(ev.filter((e) => e.type === "stt.transcript.final").at(-1)).toMatchObject({ turn_id: "turn_2" });
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "deepgram", usageUnit: "seconds", usageAmount: 3, status: "completed" });
  });

  test("/metrics counts the upstream streams open: one during a session, none after", async () => {
    const metric = async () => /voxroute_upstream_streams_open (\d+)/.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1];
    const c = connect(server.wsUrl(`/v1/stt?${NOVA}`), bearer(server.key));
    await c.opened;
    c.ws.send(second());
    for (let i = 0; i < 100 && !c.rec.events.some((e) => e.type === "stt.session.started"); i++) await Bun.sleep(10);
    expect(await metric()).toBe("1");
    c.send({ type: "stt.session.close" });
    await c.closed;
    expect(await metric()).toBe("0");
  });

  test("a client that breaks the frame rules pays for the audio it sent, as on a close", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(server.wsUrl(`/v1/stt?${NOVA}&commit_strategy=manual`), bearer(key));
    await c.opened;
    c.ws.send(second());
    c.ws.send(second());
    c.send({ type: "nope" });
    expect((await c.closed).close.code).toBe(1003);
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "deepgram", status: "failed", usageAmount: 2 });
  });

  test("event_format=provider relays Deepgram's own frames byte for byte", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${NOVA}&event_format=provider`), bearer(server.key));
    await c.opened;
    const audio = spokenSeconds(1);
    c.ws.send(audio[0]!);
    c.ws.send('{"type": "Finalize"}');
    c.ws.send('{"type":"CloseStream"}');
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(fake.connections.at(-1)!.texts).toEqual(['{"type": "Finalize"}', '{"type":"CloseStream"}']);
    expect(fake.connections.at(-1)!.received.digest()).toEqual(digestOf(audio));
    expect(rec.events.map((e) => e.type)).toEqual(["SpeechStarted", "Results", "Results", "Results", "UtteranceEnd", "Metadata"]);
  });

  test("provider_options that contradict audio_format are refused before the upgrade", async () => {
    const res = await fetch(`${server.url}/v1/stt?${NOVA}&provider_options[sample_rate]=8000`, {
      headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "conflicting_audio_format" });
  });

  test("a file goes to the prerecorded endpoint as the body; utterances come back as segments", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const mp3 = await Bun.file(new URL("./fixtures/speech.mp3", import.meta.url)).bytes();
    const res = await fetch(`${server.url}/v1/stt/transcriptions?model=nova-3&language=en`, { method: "POST", headers: { ...bearer(key), "content-type": "audio/mpeg" }, body: mp3 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ provider: "deepgram", model: "deepgram/nova-3", text: "thank you very much for your help", segments: [{ start_ms: 0, end_ms: 2700 }], billed_seconds: 3 });
    expect(fake.prerecorded.at(-1)).toMatchObject({ contentType: "audio/mpeg", file: digestOf([mp3]) });
    expect(digestOf([mp3]).bytes).toBe(11601);
    expect(Object.fromEntries(fake.prerecorded.at(-1)!.query)).toMatchObject({ model: "nova-3", language: "en", utterances: "true" });
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "deepgram", usageAmount: 3 });
  });

  test("a WAV of digital silence reaches the prerecorded endpoint as uploaded, and nothing is heard in it", async () => {
    const res = await fetch(`${server.url}/v1/stt/transcriptions?model=nova-3`, { method: "POST", headers: { ...bearer(server.key), "content-type": "audio/wav" }, body: silentWav });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ provider: "deepgram", text: "", segments: [], billed_seconds: 2 });
    expect(fake.prerecorded.at(-1)).toMatchObject({ contentType: "audio/wav", file: digestOf([silentWav]) });
  });

  describeSttFaults("Deepgram Nova", { server: () => server, fake: () => fake, query: NOVA, provider: "deepgram", faults: [["data-error", "closed 1008 DATA-0000"]] });
});
