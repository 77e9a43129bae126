import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ASSEMBLYAI } from "../src/providers/assemblyai/catalogue.ts";
import { AudioMessages } from "../src/providers/assemblyai/audio-messages.ts";
import { AssemblyAiStt } from "../src/providers/assemblyai/stt.ts";
import { ProviderError } from "../src/errors.ts";
import { spokenChunks } from "./fakes/assemblyai-streaming.ts";
import { FAKE_ASSEMBLYAI_KEY, startFakeAssemblyAi, type FakeAssemblyAi } from "./fakes/assemblyai.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { assemblyAiAt } from "./fakes/server-env.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { describeSttFaults } from "./helpers/stt-faults.ts";
import { concat, silence, speak } from "./helpers/speech.ts";
import { bearer, connect, type Client } from "./helpers/ws-client.ts";

// AssemblyAI Universal-Streaming against its fake, through /v1/stt. The streaming URL is derived
// from ASSEMBLYAI_BASE_URL (a loopback http base → ws://…/v3/ws).

let fake: FakeAssemblyAi;
let server: TestServer;
beforeAll(async () => {
  fake = startFakeAssemblyAi();
  server = await startTestServer({ ...assemblyAiAt(fake), UPSTREAM_IDLE_TIMEOUT_MS: "1500" });
});
afterAll(() => stopServerAndFakes(server, fake));

const ENGLISH = "model=universal-streaming-english&audio_format=pcm_16000";
const types = (events: Record<string, any>[]) => events.map((e) => e.type);
const sendAll = (c: Client, chunks: Uint8Array[]) => {
  for (const chunk of chunks) c.ws.send(chunk);
};
const until = async (check: () => boolean) => {
  for (let i = 0; i < 100 && !check(); i++) await Bun.sleep(20);
};
const upgradeRequest = (query: string) =>
  fetch(`${server.url}/v1/stt?${query}`, {
    headers: { ...bearer(server.key), Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==" },
  });
const noSocketsLeft = async () => {
  await until(() => fake.openSockets() === 0);
  expect(fake.openSockets()).toBe(0);
};

describe("AssemblyAI Universal-Streaming through /v1/stt", () => {
  test("auto: provider signals, growing interims, one final, a provider commit; billed for the audio", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}`), bearer(key));
    await c.opened;
    const sent = spokenChunks();
    sendAll(c, sent);
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });

    const conn = fake.streaming.at(-1)!;
    expect(conn.received.digest()).toEqual(digestOf(sent)); // all of it, in order, as sent
    expect(conn.authorization).toBe(FAKE_ASSEMBLYAI_KEY);
    expect(Object.fromEntries(conn.query)).toEqual({ speech_model: "universal-streaming-english", encoding: "pcm_s16le", sample_rate: "16000" });
    expect(conn.texts).toEqual(['{"type":"Terminate"}']);

    const ev = rec.events;
    expect(ev[0]).toMatchObject({ type: "stt.session.started", provider: "assemblyai", input_config: { turn_detection: "semantic", turn_detector: "provider", interim_results: true } });
    expect(ev[1]).toMatchObject({ type: "stt.signal", origin: "provider", signal: "started", turn_scope: "turn", basis: ["provider"], turn_id: "turn_1" });
    const interims = ev.filter((e) => e.type === "stt.transcript.interim");
    expect(interims.length).toBeGreaterThan(2);
    expect(interims.at(-1)!.text.length).toBeGreaterThan(interims[0].text.length);
    const final = ev.findIndex((e) => e.type === "stt.transcript.final");
    expect(ev[final]).toMatchObject({ text: "thank you very much for your help", turn_id: "turn_1" });
    expect(ev[final].audio_start_ms).toBeLessThan(ev[final].audio_end_ms);
    expect(ev[final + 1]).toMatchObject({ type: "stt.signal", signal: "end", origin: "provider", turn_scope: "turn", audio_ms: ev[final].audio_end_ms });
    expect(ev[final + 2]).toMatchObject({ type: "stt.audio.committed", origin: "provider", turn_id: "turn_1" });
    expect(types(ev).filter((t) => t === "stt.transcript.final")).toHaveLength(1);
    expect(ev.at(-1)).toMatchObject({ type: "stt.session.ended", billed_seconds: 4 });
    expect(ev.map((e) => e.seq)).toEqual(ev.map((_, i) => i + 1));
    expect(await lastActivity(server, tenantId)).toMatchObject({ provider: "assemblyai", usageUnit: "seconds", usageAmount: 4, status: "completed" });
    await noSocketsLeft();
  });

  test("portable options reach the wire in AssemblyAI's terms; with format_turns only the formatted final is sent", async () => {
    const opts =
      "language=es&keyterms=voxroute&keyterms=Assembly%20AI&formatting=true&turn_threshold=0.5&silence_duration_ms=300&turn_timeout_ms=2000&speech_threshold=0.6&diarization=true&interim_results=false";
    const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}&${opts}&provider_options[prompt]=a%20call&provider_options[min_turn_silence]=350`), bearer(server.key));
    await c.opened;
    sendAll(c, spokenChunks());
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(Object.fromEntries(fake.streaming.at(-1)!.query)).toEqual({
      speech_model: "universal-streaming-multilingual",
      encoding: "pcm_s16le",
      sample_rate: "16000",
      language_codes: '["es"]',
      keyterms_prompt: '["voxroute","Assembly AI"]',
      format_turns: "true",
      end_of_turn_confidence_threshold: "0.5",
      min_turn_silence: "350",
      max_turn_silence: "2000",
      vad_threshold: "0.6",
      speaker_labels: "true",
      prompt: "a call",
    });
    const finals = rec.events.filter((e) => e.type === "stt.transcript.final");
    expect(finals.map((e) => e.text)).toEqual(["Thank you very much for your help."]);
    expect(rec.events.some((e) => e.type === "stt.transcript.interim")).toBe(false);
  });

  test("manual: a commit with a turn under way is a ForceEndpoint; one with none is answered at once", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}&commit_strategy=manual`), bearer(server.key));
    await c.opened;
    c.send({ type: "stt.audio.commit" });
    await until(() => c.rec.events.some((e) => e.type === "stt.audio.committed"));
    const chunks = spokenChunks();
    sendAll(c, chunks.slice(0, 10));
    await until(() => c.rec.events.some((e) => e.type === "stt.transcript.interim"));
    c.send({ type: "stt.audio.commit" });
    sendAll(c, chunks.slice(10));
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(fake.streaming.at(-1)!.texts).toEqual(['{"type":"ForceEndpoint"}', '{"type":"Terminate"}']);

    const ev = rec.events;
    expect(ev[1]).toMatchObject({ type: "stt.audio.committed", origin: "client", turn_id: "turn_1", audio_ms: 0 });
    const committed = ev.filter((e) => e.type === "stt.audio.committed");
    expect(committed.map((e) => e.origin)).toEqual(["client", "client"]);
    const second = ev.indexOf(committed[1]);
    expect(ev[second - 1]).toMatchObject({ type: "stt.transcript.final", turn_id: "turn_2" });
    // The rest of the sentence is a turn of its own that AssemblyAI ends; manual mode does not commit it.
    expect(ev.filter((e) => e.type === "stt.transcript.final").at(-1)).toMatchObject({ turn_id: "turn_3" });
    expect(ev.find((e) => e.type === "stt.signal" && e.signal === "end")).toMatchObject({ origin: "provider", turn_id: "turn_3" });
  });

  test("20 ms frames (telephony's) are gathered into 50–1000 ms messages: the finals and times of 100 ms frames; commits send a short tail padded, its silence off the clock", async () => {
    const pcm = (samples: Int16Array) => new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
    const speech = speak("Thank you very much for your help.");
    // 3.2 s each: 3200 / 60 leaves a 20 ms tail of 20 ms frames at the commit (padded by 30 ms).
    const part = pcm(concat([silence(300), speech, silence(2900)]).slice(0, 16 * 3200));
    expect(speech.length / 16).toBeLessThan(2500);
    const run = async (frameMs: number, tails: number) => {
      const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}&commit_strategy=manual`), bearer(server.key));
      await c.opened;
      // Audio sent before the upstream is there is kept and goes in messages as large as what was kept: the messages compared are the live path's.
      await until(() => c.rec.events.some((e) => e.type === "stt.session.started"));
      const send = (audio: Uint8Array) => {
        for (let at = 0; at < audio.byteLength; at += 32 * frameMs) c.ws.send(audio.subarray(at, at + 32 * frameMs));
      };
      const commit = async () => {
        const n = c.rec.events.filter((e) => e.type === "stt.audio.committed").length;
        c.send({ type: "stt.audio.commit" });
        await until(() => c.rec.events.filter((e) => e.type === "stt.audio.committed").length > n);
      };
      send(part);
      await commit();
      // 400 ms of silence: one frame, or twenty 20 ms tails each committed (each padded by 30 ms).
      if (!tails) send(pcm(silence(400)));
      for (let i = 0; i < tails; i++) {
        c.ws.send(pcm(silence(20)));
        await commit();
      }
      send(part);
      c.send({ type: "stt.session.close" });
      const rec = await c.closed;
      expect(rec.close).toEqual({ code: 1000, reason: "stt_complete" });
      const sizes = fake.streaming.at(-1)!.audio.map((a) => a.byteLength / 32);
      expect(sizes.every((ms) => ms >= 50 && ms <= 1000)).toBe(true);
      widest = Math.max(widest, ...sizes);
      return rec.events;
    };
    // The longest message either run sent: frames that arrive while the upstream is behind go out together (up to 1000 ms).
    let widest = 0;
    const big = await run(100, 0);
    const small = await run(20, 20);
    const timed = (ev: Record<string, any>[]) => ev.filter((e) => ["stt.transcript.final", "stt.signal", "stt.audio.committed"].includes(e.type));
    const [a, b] = [timed(big), timed(small)];
    expect(b.filter((e) => e.type === "stt.transcript.final").map((e) => e.text)).toEqual(Array(2).fill("thank you very much for your help"));
    expect(b.filter((e) => e.type !== "stt.audio.committed").map((e) => [e.type, e.text, e.signal])).toEqual(a.filter((e) => e.type !== "stt.audio.committed").map((e) => [e.type, e.text, e.signal]));
    // The same times, within what the fake's loudness windows (one message: 60 ms against 100 ms, or
    // longer on a busy machine) move them; unmapped, the 600 ms of padding would show in the second turn.
    const times = (ev: Record<string, any>[]) =>
      ev.filter((e) => e.type !== "stt.audio.committed").flatMap((e) => (e.type === "stt.transcript.final" ? [e.audio_start_ms, e.audio_end_ms] : [e.audio_ms]));
    for (const [i, t] of times(b).entries()) expect(Math.abs(t - times(a)[i]!)).toBeLessThanOrEqual(Math.max(150, widest + 50));
    expect(times(b).at(-1)!).toBeLessThanOrEqual(6800);
    // Each commit answered at the client's audio so far, the padding not counted; billed for the client's audio.
    expect(
      b
        .filter((e) => e.type === "stt.audio.committed")
        .map((e) => e.audio_ms)
        .slice(1),
    ).toEqual(Array.from({ length: 20 }, (_, i) => 3220 + 20 * i));
    expect(small.at(-1)).toMatchObject({ type: "stt.session.ended", audio_ms: 6800, billed_seconds: 7 });
  });

  test("clear: ForceEndpoint, the turn's final dropped, then stt.audio.cleared", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}`), bearer(server.key));
    await c.opened;
    sendAll(c, spokenChunks().slice(0, 10));
    await until(() => c.rec.events.some((e) => e.type === "stt.transcript.interim"));
    c.send({ type: "stt.audio.clear" });
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    expect(types(rec.events)).not.toContain("stt.transcript.final");
    expect(rec.events.find((e) => e.type === "stt.audio.cleared")).toMatchObject({ turn_id: "turn_1" });
  });

  test("µ-law goes up as pcm_mulaw; provider_options must name the same encoding", async () => {
    const c = connect(server.wsUrl("/v1/stt?model=universal-streaming-english&audio_format=ulaw_8000&provider_options[encoding]=pcm_mulaw"), bearer(server.key));
    await c.opened;
    c.ws.send(new Uint8Array(800).fill(0xff));
    c.send({ type: "stt.session.close" });
    expect((await c.closed).close.code).toBe(1000);
    expect(Object.fromEntries(fake.streaming.at(-1)!.query)).toMatchObject({ encoding: "pcm_mulaw", sample_rate: "8000" });

    const res = await upgradeRequest(`${ENGLISH}&provider_options[encoding]=pcm_mulaw`);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "conflicting_audio_format" });
  });

  test("turn_detection=acoustic: the semantic end is switched off and silence_duration_ms ends the turn", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}&turn_detection=acoustic&silence_duration_ms=600`), bearer(server.key));
    await c.opened;
    sendAll(c, spokenChunks());
    c.send({ type: "stt.session.close" });
    const rec = await c.closed;
    expect(Object.fromEntries(fake.streaming.at(-1)!.query)).toMatchObject({ end_of_turn_confidence_threshold: "1", max_turn_silence: "600" });
    expect(fake.streaming.at(-1)!.query.has("min_turn_silence")).toBe(false);
    expect(rec.events[0]).toMatchObject({ input_config: { turn_detection: "acoustic", turn_detector: "provider" } });
    expect(rec.events.find((e) => e.type === "stt.signal" && e.signal === "end")).toMatchObject({ turn_scope: "utterance", origin: "provider" });
    expect(rec.events.find((e) => e.type === "stt.audio.committed")).toMatchObject({ origin: "provider" });
  });

  test("options AssemblyAI cannot honour are refused before the upgrade", async () => {
    for (const option of ["eager_end_threshold=0.3", "include_filler_words=true", "min_speech_duration_ms=100"]) {
      const res = await upgradeRequest(`${ENGLISH}&${option}`);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "unsupported_stt_option", param: option.split("=")[0] });
    }
  });

  test("an idle session sends KeepAlive (every 5 s without audio)", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}`), bearer(server.key));
    await c.opened;
    await until(() => fake.streaming.length > 0 && c.rec.events.length > 0);
    await Bun.sleep(5600);
    c.send({ type: "stt.session.close" });
    expect((await c.closed).close.code).toBe(1000);
    expect(fake.streaming.at(-1)!.texts).toEqual(['{"type":"KeepAlive"}', '{"type":"Terminate"}']);
  }, 10_000);

  test("stereo is refused with a clear error, not sent as noise", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}&channels=2`), bearer(server.key));
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    expect(rec.events.at(-1)).toMatchObject({ type: "stt.error", message: expect.stringContaining("mono") });
  });

  test("event_format=provider relays AssemblyAI's own frames byte for byte", async () => {
    const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}&event_format=provider&provider_options[format_turns]=true`), bearer(server.key));
    await c.opened;
    const chunks = spokenChunks();
    sendAll(c, chunks);
    c.ws.send('{"type": "ForceEndpoint"}');
    c.ws.send('{"type":"Terminate"}');
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    const conn = fake.streaming.at(-1)!;
    expect(conn.texts).toEqual(['{"type": "ForceEndpoint"}', '{"type":"Terminate"}']);
    expect(Buffer.concat(conn.audio).equals(Buffer.concat(chunks))).toBe(true);
    expect(conn.audio.map((a) => a.byteLength)).toEqual(chunks.map((a) => a.byteLength));
    const t = types(rec.events);
    expect(t[0]).toBe("Begin");
    expect(t[1]).toBe("SpeechStarted");
    expect(t.at(-1)).toBe("Termination");
    expect(rec.events.filter((e) => e.type === "Turn" && e.end_of_turn).map((e) => e.turn_is_formatted)).toEqual([false, true]);
  });

  test("a connection lost after a final: stt.error, 1011, billed up to that final", async () => {
    const { key, tenantId } = await fundedAccount(server);
    fake.fault("drop-after-turn");
    const c = connect(server.wsUrl(`/v1/stt?${ENGLISH}`), bearer(key));
    await c.opened;
    sendAll(c, [...spokenChunks(), ...spokenChunks()]);
    const rec = await c.closed;
    expect(rec.close).toEqual({ code: 1011, reason: "upstream_error" });
    const final = rec.events.find((e) => e.type === "stt.transcript.final")!;
    expect(final.text).toBe("thank you very much for your help");
    expect(rec.events.at(-1)).toMatchObject({ type: "stt.error", code: "upstream_error" });
    expect(await lastActivity(server, tenantId)).toMatchObject({ status: "failed", usageAmount: Math.ceil(final.audio_end_ms / 1000) });
    await noSocketsLeft();
  });

  describeSttFaults("Universal-Streaming", {
    server: () => server,
    fake: () => fake,
    query: ENGLISH,
    provider: "assemblyai",
    audio: () => spokenChunks().slice(0, 12),
    faults: [
      ["close-4001", "closed 4001 after the upgrade"],
      ["close-4029", "closed 4029 after the upgrade"],
      ["stall", "silent after Begin"],
      ["error-frame", "an Error frame"],
    ],
  });
});

describe("a refused AssemblyAI session with a fallback candidate", () => {
  // "aai-backup" is the same adapter serving the same model, so a refusal can meet a fallback.
  let backed: TestServer;
  const adapter = () => new AssemblyAiStt({ apiKey: FAKE_ASSEMBLYAI_KEY, baseUrl: fake.url, connectTimeoutMs: 1000, idleTimeoutMs: 1500 });
  beforeAll(async () => {
    const backup = Object.assign(adapter(), { id: "aai-backup" });
    const binding = ASSEMBLYAI.spec.bindings.find((b) => b.id === "universal-streaming-english")!;
    const catalogue = { providers: [{ ...ASSEMBLYAI.spec, id: "aai-backup", name: "AssemblyAI (backup)", bindings: [binding] }], models: [] };
    backed = await startTestServer({ ASSEMBLYAI_API_KEY: FAKE_ASSEMBLYAI_KEY, ASSEMBLYAI_BASE_URL: fake.url }, { extra: { catalogue, providers: [], sttProviders: [backup] } });
  });
  afterAll(() => backed.stop(0));

  for (const fault of ["401", "close-4001", "close-4029"] as const) {
    test(`${fault}: the next candidate serves the session; the attempt is recorded`, async () => {
      const { key, tenantId } = await fundedAccount(backed);
      fake.fault(fault);
      const c = connect(backed.wsUrl(`/v1/stt?model=assemblyai/universal-streaming-english&audio_format=pcm_16000&provider_order=assemblyai,aai-backup`), bearer(key));
      await c.opened;
      sendAll(c, spokenChunks());
      c.send({ type: "stt.session.close" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
      expect(rec.events[0]).toMatchObject({ type: "stt.session.started", provider: "aai-backup" });
      expect(rec.events.find((e) => e.type === "stt.transcript.final")).toMatchObject({ text: "thank you very much for your help" });
      const activity = await lastActivity(backed, tenantId);
      expect(activity).toMatchObject({ provider: "aai-backup", status: "completed" });
      expect(JSON.stringify(activity.attempts)).toContain("assemblyai");
      await noSocketsLeft();
    });
  }

  test("a close that is the request's fault (4000 bad sample rate) is not retryable: no other candidate would do better", async () => {
    const req = { model: "universal-streaming-english", audioFormat: "pcm_16000" as const, channels: 1, interim: true, commitStrategy: "auto" as const, options: { sample_rate: "0" } };
    const err = await adapter()
      .open(req)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ProviderError);
    expect(err).toMatchObject({ retryable: false, message: "assemblyai closed the stream: 4000 Sample rate must be a positive integer" });
    fake.fault("close-4029");
    expect(
      await adapter()
        .open({ ...req, options: {} })
        .then(
          () => undefined,
          (e: unknown) => e,
        ),
    ).toMatchObject({ retryable: true });
    await noSocketsLeft();
  });
});

describe("AudioMessages: the client's audio in AssemblyAI's 50–1000 ms messages", () => {
  const gather = (format: string) => {
    const sent: Uint8Array[] = [];
    return { sent, messages: new AudioMessages(format, (audio) => sent.push(audio)) };
  };

  test("a frame over 1000 ms is split; what is under 50 ms waits for the next frame, and is padded only at a flush", () => {
    const { sent, messages } = gather("pcm_16000");
    messages.push(new Uint8Array(32 * 1500).fill(1));
    expect(sent.map((m) => m.byteLength / 32)).toEqual([1000, 500]);
    messages.push(new Uint8Array(32 * 1020).fill(2));
    expect(sent.map((m) => m.byteLength / 32)).toEqual([1000, 500, 1000]);
    messages.push(new Uint8Array(32 * 10).fill(3));
    expect(sent).toHaveLength(3); // 30 ms gathered
    messages.flush();
    const tail = sent.at(-1)!;
    expect(tail.byteLength / 32).toBe(50);
    expect([...tail.subarray(0, 32 * 20)].every((b) => b === 2)).toBe(true);
    expect([...tail.subarray(32 * 20, 32 * 30)].every((b) => b === 3)).toBe(true);
    expect([...tail.subarray(32 * 30)].every((b) => b === 0)).toBe(true);
    // 2530 ms of the client's audio, then 20 ms of padding: later times lose it.
    expect(messages.clock.clientTime(2530)).toBe(2530);
    expect(messages.clock.clientTime(2600)).toBe(2580);
    messages.flush();
    expect(sent).toHaveLength(4); // nothing gathered, nothing sent
  });

  test("µ-law pads with its own silence (0xFF); an odd rate rounds the minimum up to whole samples", () => {
    const ulaw = gather("ulaw_8000");
    ulaw.messages.push(new Uint8Array(8 * 20));
    ulaw.messages.flush();
    expect(ulaw.sent[0]!.byteLength).toBe(400);
    expect(ulaw.sent[0]![399]).toBe(0xff);
    const odd = gather("pcm_22050");
    odd.messages.push(new Uint8Array(2 * 1102));
    expect(odd.sent).toHaveLength(0); // 49.98 ms
    odd.messages.push(new Uint8Array(2));
    expect(odd.sent[0]!.byteLength).toBe(2 * 1103);
  });
});
