import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Writable } from "node:stream";
import { createLogger } from "../src/log.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi, type FakeOpenAi } from "./fakes/openai.ts";
import { type ReceivedSpan, startFakeOtlpReceiver, type FakeOtlpReceiver } from "./fakes/otlp-receiver.ts";
import { startFakeApp } from "./fakes/conversation-relay-app.ts";
import { fundedAccount } from "./helpers/accounts.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { realtimeProfile, say, talkOverAnswer, until } from "./helpers/realtime.ts";
import { concat, silence, speak, wavFile } from "./helpers/speech.ts";
import { speechOgg } from "./helpers/speech-file.ts";
import { tempDir } from "./helpers/temp-dirs.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// OpenTelemetry traces, as a collector receives them over OTLP/HTTP: the span tree of a request
// and of a WebSocket session (with a failover), the client's trace continued, the provider given
// the trace context, and no key or secret in any attribute.

let receiver: FakeOtlpReceiver;
let fake: FakeOpenAi;
let server: TestServer;
const app = startFakeApp();
/** Every key a test used: none may appear in what is exported. */
const keys: string[] = [];
const logged: Record<string, unknown>[] = [];
const sink = new Writable({
  write: (chunk, _enc, done) => {
    logged.push(JSON.parse(String(chunk)));
    done();
  },
});

beforeAll(async () => {
  receiver = startFakeOtlpReceiver();
  fake = startFakeOpenAi();
  server = await startTestServer(
    {
      OPENAI_API_KEY: FAKE_OPENAI_KEY,
      OPENAI_BASE_URL: fake.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_SERVICE_NAME: "voxroute-under-test",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test,team=voice%2Cops",
      OTEL_TRACES_SAMPLER: "parentbased_always_on",
      OTEL_BSP_SCHEDULE_DELAY: "20",
    },
    { log: createLogger("info", sink) },
  );
});
afterAll(() => stopServerAndFakes(server, fake, receiver, app));

const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");

/** `spans` as `name(children…)` from `root` down, children in start order (ids and times left out). */
function tree(spans: ReceivedSpan[], root: ReceivedSpan): string {
  const children = spans.filter((s) => s.parentSpanId === root.spanId).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  return children.length ? `${root.name}(${children.map((c) => tree(spans, c)).join(" ")})` : root.name;
}

/** A caller on a new profile whose application is the fake at `path`, in a trace of its own (its id). */
async function tracedCall(path: string) {
  const { key } = await fundedAccount(server);
  keys.push(key);
  const profileId = await realtimeProfile(server, key, app.url(path));
  const traceId = hex(16);
  const c = connect(server.wsUrl(`/v1/realtime?profile_id=${profileId}`), { ...bearer(key), traceparent: `00-${traceId}-${hex(8)}-01` });
  await c.opened;
  return { c, traceId };
}

const only = (spans: ReceivedSpan[], name: string) => {
  const found = spans.filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
};

describe("traces", () => {
  test("an HTTP TTS request: its root continues the client's trace, children for admission, routing, the provider attempt, the hold and the settle; the provider gets the attempt's traceparent", async () => {
    const { key, tenantId } = await fundedAccount(server);
    keys.push(key);
    const traceId = hex(16);
    const parent = hex(8);
    const res = await fetch(`${server.url}/oai/audio/speech`, {
      method: "POST",
      headers: { ...bearer(key), "content-type": "application/json", traceparent: `00-${traceId}-${parent}-01` },
      body: JSON.stringify({ model: "tts-1", voice: "alloy", input: "A traced sentence.", response_format: "pcm" }),
    });
    expect(res.status).toBe(200);
    expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    const spans = await receiver.waitFor(traceId, "POST /oai/audio/speech");
    const root = only(spans, "POST /oai/audio/speech");
    expect(root.parentSpanId).toBe(parent);
    expect(root.resource).toMatchObject({ "service.name": "voxroute-under-test", "deployment.environment": "test", team: "voice,ops" });
    expect(root.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/oai/audio/speech",
      "http.response.status_code": 200,
      "voxroute.surface": "oai",
      "voxroute.tenant_id": tenantId,
      "voxroute.key_prefix": key.slice(0, (root.attributes["voxroute.key_prefix"] as string).length),
      "voxroute.provider": "openai",
      "voxroute.request_id": res.headers.get("x-request-id"),
    });
    expect(tree(spans, root)).toBe("POST /oai/audio/speech(admission(ledger.hold) routing(provider.attempt) ledger.settle)");
    const attempt = only(spans, "provider.attempt");
    expect(attempt.attributes).toMatchObject({ "voxroute.provider": "openai", "voxroute.model": "openai/tts-1" });
    expect(attempt.events.map((e) => e.name)).toEqual(["connected", "first_output", "end"]);
    expect(only(spans, "routing").attributes).toMatchObject({ "voxroute.chosen": "openai/openai/tts-1" });
    expect(fake.speech.at(-1)!.traceparent).toBe(`00-${traceId}-${attempt.spanId}-01`);
    expect(logged.find((l) => l.msg === "request" && l.request_id === res.headers.get("x-request-id"))).toMatchObject({ trace_id: traceId, span_id: root.spanId });
  });

  test("a WebSocket TTS session with a failover: one root to its close, a failed attempt then the one that served", async () => {
    const { key } = await fundedAccount(server);
    keys.push(key);
    fake.fault("500");
    const chain = encodeURIComponent(JSON.stringify([{ model: "flite", voice: "rms" }]));
    const traceId = hex(16);
    const c = connect(server.wsUrl(`/v1/tts?model=tts-1&voice=alloy&fallbacks=${chain}`), { ...bearer(key), traceparent: `00-${traceId}-${hex(8)}-01` });
    c.send({ type: "text", text: "The fallback speaks." });
    c.send({ type: "close" });
    expect((await c.closed).close).toEqual({ code: 1000, reason: "tts_complete" });
    const spans = await receiver.waitFor(traceId, "WebSocket /v1/tts");
    const root = only(spans, "WebSocket /v1/tts");
    expect(root.attributes).toMatchObject({ "websocket.close_code": 1000, "voxroute.outcome": "completed", "voxroute.surface": "native", "voxroute.provider": "flite" });
    expect(tree(spans, root)).toBe("WebSocket /v1/tts(handshake.admission admission(ledger.hold) routing(provider.attempt provider.attempt) ledger.settle)");
    const [failed, served] = spans.filter((s) => s.name === "provider.attempt").sort((a, b) => (a.start < b.start ? -1 : 1));
    expect({ provider: failed!.attributes["voxroute.provider"], status: failed!.status, error: failed!.attributes["error.type"] }).toEqual({ provider: "openai", status: 2, error: "upstream_error" });
    expect({ provider: served!.attributes["voxroute.provider"], status: served!.status, events: served!.events.map((e) => e.name) }).toEqual({
      provider: "flite",
      status: 0,
      events: ["connected", "first_output", "end"],
    });
    // The session's lines (its failed attempt, its close) carry its trace, beside its request id.
    const lines = logged.filter((l) => l.trace_id === traceId).map((l) => ({ msg: l.msg, span: l.span_id, request: typeof l.request_id }));
    expect(lines).toEqual(
      expect.arrayContaining([
        { msg: "request", span: root.spanId, request: "string" },
        { msg: "provider attempt failed", span: root.spanId, request: "string" },
        { msg: "session closed", span: root.spanId, request: "string" },
      ]),
    );
    expect(only(spans, "routing").events).toEqual([{ name: "failover", attributes: { "voxroute.provider": "openai", reason: "upstream_error" } }]);
  });

  test("a file transcription: measuring, then the provider attempt's recognition, whose traceparent the provider gets", async () => {
    const { key } = await fundedAccount(server);
    keys.push(key);
    const traceId = hex(16);
    const form = new FormData();
    form.set("model", "whisper-1");
    form.set("file", new Blob([await speechOgg()]), "speech.ogg");
    const res = await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: { ...bearer(key), traceparent: `00-${traceId}-${hex(8)}-01` }, body: form });
    expect(res.status).toBe(200);
    const spans = await receiver.waitFor(traceId, "POST /v1/stt/transcriptions");
    const root = only(spans, "POST /v1/stt/transcriptions");
    expect(root.attributes).toMatchObject({ "http.response.status_code": 200, "voxroute.surface": "native", "voxroute.provider": "openai" });
    expect(tree(spans, root)).toBe("POST /v1/stt/transcriptions(file.measure admission routing(provider.attempt(file.recognize)) ledger.settle)");
    expect(only(spans, "file.measure").attributes).toMatchObject({ "voxroute.container": "Ogg", "voxroute.seconds": 2.76 });
    expect(only(spans, "file.recognize").attributes["voxroute.heard_seconds"]).toBeGreaterThan(2);
    expect(fake.transcriptions.at(-1)!.traceparent).toBe(`00-${traceId}-${only(spans, "file.recognize").spanId}-01`);
  });

  test.skipIf(!localSttAvailable)("a streamed file transcription: measured, decoded, then recognized by a streaming session", async () => {
    const { key } = await fundedAccount(server);
    keys.push(key);
    const traceId = hex(16);
    const form = new FormData();
    form.set("model", "pocketsphinx");
    form.set("stream", "true");
    form.set("file", new Blob([wavFile(concat([speak("Thank you very much for your help."), silence(600)]))]), "speech.wav");
    const res = await fetch(`${server.url}/oai/audio/transcriptions`, { method: "POST", headers: { ...bearer(key), traceparent: `00-${traceId}-${hex(8)}-01` }, body: form });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("transcript.text.done");
    const spans = await receiver.waitFor(traceId, "POST /oai/audio/transcriptions");
    const root = only(spans, "POST /oai/audio/transcriptions");
    expect(tree(spans, root)).toBe("POST /oai/audio/transcriptions(file.measure admission file.decode routing(provider.attempt) ledger.settle)");
    expect(only(spans, "file.decode").attributes).toMatchObject({ "voxroute.decodable": true });
  });

  test("a WebSocket STT session to a WebSocket provider: the provider's handshake carries the attempt's traceparent", async () => {
    const { key } = await fundedAccount(server);
    keys.push(key);
    const traceId = hex(16);
    const c = connect(server.wsUrl("/v1/stt?model=gpt-4o-mini-transcribe&audio_format=ulaw_8000"), { ...bearer(key), traceparent: `00-${traceId}-${hex(8)}-01` });
    await c.opened;
    c.ws.send(new Uint8Array(8000).fill(0xff));
    c.send({ type: "stt.session.close" });
    expect((await c.closed).close.code).toBe(1000);
    const spans = await receiver.waitFor(traceId, "WebSocket /v1/stt");
    const root = only(spans, "WebSocket /v1/stt");
    expect(root.attributes).toMatchObject({ "websocket.close_code": 1000, "voxroute.provider": "openai", "voxroute.model": "openai/gpt-4o-mini-transcribe" });
    expect(tree(spans, root)).toBe("WebSocket /v1/stt(handshake.admission admission(ledger.hold) routing(provider.attempt) ledger.settle)");
    const handshake = fake.realtime.find((r) => r.traceparent?.includes(traceId))!;
    expect(handshake.traceparent).toBe(`00-${traceId}-${only(spans, "provider.attempt").spanId}-01`);
  });

  test.skipIf(!localSttAvailable)(
    "a realtime turn: end of speech, prompt, first token, first audio on the turn's span; the application's handshake carries the conversation's traceparent",
    async () => {
      const { c, traceId } = await tracedCall("/echo");
      await say(c, concat([silence(300), speak("Thank you very much for your help."), silence(900)]));
      await until(() => c.rec.events.some((e) => e.type === "realtime.response.audio.done"));
      c.send({ type: "realtime.session.close" });
      expect((await c.closed).close).toEqual({ code: 1000, reason: "conversation_complete" });
      const spans = await receiver.waitFor(traceId, "WebSocket /v1/realtime");
      const root = only(spans, "WebSocket /v1/realtime");
      expect(root.attributes).toMatchObject({ "websocket.close_code": 1000, "voxroute.end_reason": "client_closed", "voxroute.surface": "native" });
      const turn = only(spans, "realtime.turn");
      expect(turn.parentSpanId).toBe(root.spanId);
      expect(turn.events.map((e) => e.name)).toEqual(["end_of_speech", "prompt", "first_token", "first_audio"]);
      // The recognizer's session under the conversation, and so the answer's: it is opened as the caller starts speaking, before the turn ends.
      const sessions = spans.filter((s) => s.name.startsWith("session."));
      expect(
        sessions
          .map((s) => ({ name: s.name, parent: s.parentSpanId === root.spanId ? "conversation" : s.parentSpanId === turn.spanId ? "turn" : "other" }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      ).toEqual([
        { name: "session.stt", parent: "conversation" },
        { name: "session.tts", parent: "conversation" },
      ]);
      const handshake = app.connections.find((a) => a.headers.traceparent?.includes(traceId))!;
      expect(handshake.headers.traceparent).toBe(`00-${traceId}-${root.spanId}-01`);
    },
  );

  // Only the API package may be loaded: prom-client loads it for its own use, and it does nothing without an SDK.
  test("with no endpoint set, nothing is traced and the SDK is never loaded, even for a request that sends a traceparent", () => {
    const dir = tempDir("voxroute-untraced-");
    const script = `
      import { loadConfig } from "./src/config.ts";
      import { startServer } from "./src/server.ts";
      const server = await startServer(loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "silent", DATABASE_URL: "sqlite://${dir}/db.sqlite", PICO_VOICES_URL: "" }));
      const headers = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" };
      const statuses = [(await fetch(server.url + "/healthz", { headers })).status, (await fetch(server.url + "/v1/nowhere", { headers })).status];
      await server.stop(0);
      console.log(JSON.stringify({ statuses, tracing: server.ctx.config.tracing ?? null, loaded: Object.keys(require.cache).filter((k) => k.includes("@opentelemetry") && !k.includes("@opentelemetry/api/")) }));
      process.exit(0);`;
    const run = Bun.spawnSync(["bun", "-e", script], { cwd: new URL("..", import.meta.url).pathname, env: { PATH: process.env.PATH! }, stderr: "pipe" });
    expect(run.stderr.toString()).toBe("");
    expect(JSON.parse(run.stdout.toString().trim().split("\n").at(-1)!)).toEqual({ statuses: [200, 404], tracing: null, loaded: [] });
  });

  test.skipIf(!localSttAvailable)("a barge-in is an event: of the turn whose answer it stopped, or of the conversation once that answer was made", async () => {
    const { c, traceId } = await tracedCall("/long");
    await talkOverAnswer(c);
    c.send({ type: "realtime.session.close" });
    await c.closed;
    const spans = await receiver.waitFor(traceId, "WebSocket /v1/realtime");
    const [first, second] = spans.filter((s) => s.name === "realtime.turn").sort((a, b) => (a.start < b.start ? -1 : 1));
    expect(first!.events.map((e) => e.name).slice(0, 4)).toEqual(["end_of_speech", "prompt", "first_token", "first_audio"]);
    const root = only(spans, "WebSocket /v1/realtime");
    const bargeIns = [root, first!].flatMap((s) => s.events.filter((e) => e.name === "barge_in").map((e) => e.attributes["voxroute.response_id"]));
    expect(bargeIns).toEqual(["resp_1"]);
    expect(first!.end <= second!.start).toBe(true);
    expect(second!.events.map((e) => e.name).slice(0, 2)).toEqual(["end_of_speech", "prompt"]);
  });

  test("a WebSocket closed with no session behind it (its key refused after the upgrade) still ends its span", async () => {
    const traceId = hex(16);
    const c = connect(server.wsUrl("/v1/realtime?profile_id=rtp_nothing"), { ...bearer("vxr_not_a_key_at_all"), traceparent: `00-${traceId}-${hex(8)}-01` });
    const { close } = await c.closed;
    expect(close.code).toBeGreaterThanOrEqual(4000);
    const spans = await receiver.waitFor(traceId, "WebSocket /v1/realtime");
    expect(spans.map((s) => s.name).sort()).toEqual(["WebSocket /v1/realtime", "handshake.admission"]);
    expect(only(spans, "handshake.admission").attributes["error.type"]).toBe("invalid_api_key");
  });

  test("no key, token or secret in anything exported", async () => {
    expect(receiver.bodies.length).toBeGreaterThan(0);
    const sent = receiver.bodies.join("\n");
    for (const secret of [...keys, FAKE_OPENAI_KEY]) expect(sent).not.toContain(secret);
    for (const span of receiver.spans)
      for (const value of [...Object.values(span.attributes), ...span.events.flatMap((e) => Object.values(e.attributes))]) expect(String(value)).not.toMatch(/^(vx|sk)-[A-Za-z0-9_-]{12,}/);
  });
});
