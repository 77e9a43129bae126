import { afterAll, describe, expect, test } from "bun:test";
import Cartesia from "@cartesia/cartesia-js";
import { FAKE_CARTESIA_KEY, FAKE_CARTESIA_VOICE, startFakeCartesia } from "./fakes/cartesia.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { speak } from "./helpers/speech.ts";

// The fake must be good enough for the official SDK: otherwise tests against it prove nothing.

const fake = startFakeCartesia();
// The SDK's TTS WebSocket always dials wss://, so it meets a second fake serving TLS.
const tlsFake = startFakeCartesia({ tls: true });
afterAll(() => {
  fake.stop();
  tlsFake.stop();
});
const client = new Cartesia({ apiKey: FAKE_CARTESIA_KEY, baseURL: fake.url, maxRetries: 0 });

describe("the Cartesia fake, through the official SDK", () => {
  test("tts.generate streams real raw PCM at the asked rate", async () => {
    const res = await client.tts.generate({
      model_id: "sonic-3",
      transcript: "Hello from the fake.",
      voice: { mode: "id", id: FAKE_CARTESIA_VOICE } as never,
      output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 16000 },
    });
    const audio = new Uint8Array(await res.arrayBuffer());
    expect(audio.length / 2 / 16000).toBeGreaterThan(0.8);
    expect(fake.requests.at(-1)).toMatchObject({ body: { model_id: "sonic-3", transcript: "Hello from the fake." }, authorization: `Bearer ${FAKE_CARTESIA_KEY}`, version: "2026-08-14" });
  });

  test("stt.transcribe answers text and word timings", async () => {
    const file = new File([await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer()], "speech.wav", { type: "audio/wav" });
    const res = await client.stt.transcribe({ file, model: "ink-whisper", language: "en", timestamp_granularities: ["word"] });
    expect(res.text).toBe("Thank you very much. For your help.");
    expect(res.words?.[0]).toEqual({ word: "Thank", start: 0, end: 0.35 });
    expect(fake.transcriptions.at(-1)!.fields).toMatchObject({ model: ["ink-whisper"], language: ["en"] });
  });

  test("errors come as Cartesia error objects the SDK understands", async () => {
    fake.fault("429");
    const err = await client.tts
      .generate({ model_id: "sonic-3", transcript: "x", voice: FAKE_CARTESIA_VOICE as never, output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: 16000 } })
      .then(
        () => undefined,
        (e: InstanceType<typeof Cartesia.APIError>) => e,
      );
    expect(err).toBeInstanceOf(Cartesia.RateLimitError);
    expect(err?.status).toBe(429);
    expect(err?.error).toMatchObject({ error_code: "rate_limited" });
  });
});

describe("the Cartesia realtime fake, through the official SDK", () => {
  const pcm = { container: "raw", encoding: "pcm_s16le", sample_rate: 16000 } as const;

  test("tts.websocket: a context streamed in pieces, flushed and ended answers real speech, flush_done and done", async () => {
    const tls = new Cartesia({ apiKey: FAKE_CARTESIA_KEY, baseURL: tlsFake.url, maxRetries: 0 });
    const ws = await tls.tts.websocket({ rejectUnauthorized: false } as never); // the fake's self-signed certificate
    const ctx = ws.context({ model_id: "sonic-3", voice: { mode: "id", id: FAKE_CARTESIA_VOICE } as never, output_format: pcm });
    await ctx.push({ transcript: "Hello from the " });
    await ctx.push({ transcript: "realtime fake.", flush: true });
    await ctx.push({ transcript: " And goodbye." });
    await ctx.no_more_inputs();
    const events: { type: string; audio?: Uint8Array; flush_id?: number }[] = [];
    for await (const ev of ctx.receive({ timeout: 5000 })) events.push(ev as never);
    ws.close();

    const types = events.map((e) => e.type);
    expect(types.at(-1)).toBe("done");
    const flushAt = types.indexOf("flush_done");
    expect(events[flushAt]).toMatchObject({ flush_id: 1 });
    const seconds = (list: typeof events) => list.reduce((n, e) => n + (e.audio?.length ?? 0), 0) / 2 / 16000;
    expect(seconds(events.slice(0, flushAt))).toBeGreaterThan(1); // "Hello from the realtime fake."
    expect(seconds(events.slice(flushAt))).toBeGreaterThan(0.5); // "And goodbye."
    const sent = tlsFake.ttsSockets.at(-1)!;
    expect(sent).toMatchObject({ authorization: `Bearer ${FAKE_CARTESIA_KEY}`, version: "2026-08-14" });
    expect(sent.messages.map((m) => [m.transcript, m.continue, m.flush ?? false])).toEqual([
      ["Hello from the ", true, false],
      ["realtime fake.", true, false],
      ["", true, true],
      [" And goodbye.", true, false],
      ["", false, false],
    ]);
    expect(new Set(sent.messages.map((m) => m.context_id))).toEqual(new Set([ctx.contextId]));
  });

  test("tts.websocket: an injected error reaches the SDK as a Cartesia error", async () => {
    const tls = new Cartesia({ apiKey: FAKE_CARTESIA_KEY, baseURL: tlsFake.url, maxRetries: 0 });
    tlsFake.fault("error");
    const ws = await tls.tts.websocket({ rejectUnauthorized: false } as never);
    ws.on("error", () => {});
    const ctx = ws.context({ model_id: "sonic-3", voice: { mode: "id", id: FAKE_CARTESIA_VOICE } as never, output_format: pcm });
    await ctx.push({ transcript: "Hello." });
    const err = await (async () => {
      for await (const _ of ctx.receive({ timeout: 2000 }));
    })().then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toBe("Internal server error");
    ws.close();
  });

  test("stt.manualFinalize.websocket: audio in, interim and final transcripts (none for silence), flush_done, done and the close", async () => {
    const ws = client.stt.manualFinalize.websocket({ model: "ink-whisper", encoding: "pcm_s16le", sample_rate: 16000, language: "en", keyterm: ["voxroute"], max_silence_duration_secs: 0.4 });
    const messages: { type: string; text?: string; is_final?: boolean }[] = [];
    ws.on("event", (m) => void messages.push(m as never));
    ws.on("error", () => {});
    const closed = new Promise<void>((resolve) => {
      void (async () => {
        for await (const ev of ws.stream()) if (ev.type === "close") return resolve();
      })();
    });
    const audio = new Uint8Array(speak("Thank you very much.").buffer);
    for (let i = 0; i < audio.length; i += 3200) ws.sendRaw(audio.subarray(i, i + 3200));
    ws.send("finalize");
    ws.sendRaw(new Uint8Array(16000));
    ws.send("close");
    await closed;

    expect(messages.some((m) => m.type === "transcript" && m.is_final === false)).toBe(true);
    // The half second of digital silence after the finalize is heard as nothing.
    expect(messages.filter((m) => m.type === "transcript" && m.is_final).map((m) => m.text)).toEqual(["Thank you very", ""]);
    expect(messages.map((m) => m.type).filter((t) => t !== "transcript")).toEqual(["flush_done", "done"]);
    const sent = fake.sttSockets.at(-1)!;
    expect(Object.fromEntries(sent.query)).toMatchObject({ model: "ink-whisper", encoding: "pcm_s16le", sample_rate: "16000", language: "en", keyterm: "voxroute", max_silence_duration_secs: "0.4" });
    expect(sent).toMatchObject({ authorization: `Bearer ${FAKE_CARTESIA_KEY}`, version: "2026-08-14", texts: ["finalize", "close"], audioBytes: audio.length + 16000 });
    expect(sent.received.digest()).toEqual(digestOf([audio, new Uint8Array(16000)]));
  });
});
