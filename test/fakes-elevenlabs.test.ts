import { afterAll, describe, expect, test } from "bun:test";
import { AudioFormat, CommitStrategy, ElevenLabsClient, ElevenLabsError, RealtimeEvents } from "@elevenlabs/elevenlabs-js";
import * as wire from "@elevenlabs/elevenlabs-js/serialization";
import { FAKE_ELEVENLABS_KEY, FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { speech } from "./fakes/http-fake.ts";
import { digestOf } from "./fakes/received-audio.ts";

// The fake must be good enough for the official SDK: otherwise tests against it prove nothing.

const fake = startFakeElevenLabs();
afterAll(() => fake.stop());
const client = new ElevenLabsClient({ apiKey: FAKE_ELEVENLABS_KEY, baseUrl: fake.url, maxRetries: 0 });

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: ElevenLabsError) => e,
  );

async function bytes(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

describe("the ElevenLabs fake, through the official SDK", () => {
  test("textToSpeech.stream streams real PCM at the asked rate, with the SDK's wire names", async () => {
    const audio = await bytes(
      await client.textToSpeech.stream(FAKE_VOICE, { text: "Hello from the fake.", modelId: "eleven_flash_v2_5", outputFormat: "pcm_16000", voiceSettings: { stability: 0.4 } }),
    );
    expect(audio.length / 2 / 16000).toBeGreaterThan(0.8);
    const sent = fake.requests.at(-1)!;
    expect(sent).toMatchObject({
      voiceId: FAKE_VOICE,
      query: { output_format: "pcm_16000" },
      body: { text: "Hello from the fake.", model_id: "eleven_flash_v2_5", voice_settings: { stability: 0.4 } },
      apiKey: FAKE_ELEVENLABS_KEY,
    });
  });

  test("textToSpeech.convertWithTimestamps and streamWithTimestamps: the audio and its characters' times, as the SDK reads them", async () => {
    const text = "Hello from the fake, with times.";
    const whole = await client.textToSpeech.convertWithTimestamps(FAKE_VOICE, { text, modelId: "eleven_flash_v2_5", outputFormat: "pcm_16000" });
    const seconds = Buffer.from(whole.audioBase64, "base64").byteLength / 2 / 16000;
    expect(whole.alignment!.characters.join("")).toBe(text);
    expect(whole.alignment!.characterEndTimesSeconds.at(-1)!).toBeCloseTo(seconds, 3);
    const chunks = [];
    for await (const chunk of await client.textToSpeech.streamWithTimestamps(FAKE_VOICE, { text, modelId: "eleven_flash_v2_5", outputFormat: "pcm_16000" })) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.flatMap((c) => c.alignment!.characters).join("")).toBe(text);
    expect(Buffer.concat(chunks.map((c) => Buffer.from(c.audioBase64, "base64")))).toEqual(Buffer.from(whole.audioBase64, "base64"));
    expect(fake.requests.at(-1)!.path).toBe(`/v1/text-to-speech/${FAKE_VOICE}/stream/with-timestamps`);
  });

  test("the default output is MP3", async () => {
    const audio = await bytes(await client.textToSpeech.stream(FAKE_VOICE, { text: "An MP3." }));
    expect(audio[0]).toBe(0xff);
  });

  test("speechToText.convert answers text and word timings", async () => {
    const file = new Blob([await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer()], { type: "audio/wav" });
    const res = (await client.speechToText.convert({ modelId: "scribe_v1", file, languageCode: "en" })) as { text: string; words: { type: string }[] };
    expect(res.text).toBe("Thank you very much. For your help.");
    expect(res.words.filter((w) => w.type === "word").length).toBe(7);
    expect(fake.transcriptions.at(-1)).toMatchObject({ fields: { model_id: "scribe_v1", language_code: "en" }, apiKey: FAKE_ELEVENLABS_KEY });
  });

  test("errors come as ElevenLabs detail objects the SDK understands", async () => {
    fake.fault("429");
    const err = await failure(client.textToSpeech.stream(FAKE_VOICE, { text: "x" }));
    expect(err).toBeInstanceOf(ElevenLabsError);
    expect(err?.statusCode).toBe(429);
    expect(err?.body).toEqual({ detail: { status: "too_many_concurrent_requests", message: expect.any(String) } });
    const bad = new ElevenLabsClient({ apiKey: "wrong", baseUrl: fake.url, maxRetries: 0 });
    expect((await failure(bad.textToSpeech.stream(FAKE_VOICE, { text: "x" })))?.statusCode).toBe(401);
    expect((await failure(client.textToSpeech.stream("no-such-voice", { text: "x" })))?.statusCode).toBe(404);
  });
});

// The SDK has a client for Scribe realtime (`speechToText.realtime`) but none for the TTS
// input-streaming WebSocket: only its message schemas. So the TTS sockets are driven with a plain
// WebSocket as the docs describe, every frame built by the SDK's serializer and every answer
// parsed by its strict schema.
describe("the ElevenLabs TTS WebSockets, with the SDK's message schemas", () => {
  async function session(path: string, frames: unknown[], serializer: { jsonOrThrow(v: unknown): unknown }, receiver: { parseOrThrow(v: unknown): any }) {
    const ws = new WebSocket(`${fake.url.replace("http", "ws")}/v1/text-to-speech/${FAKE_VOICE}/${path}?model_id=eleven_flash_v2_5&output_format=pcm_16000`, {
      headers: { "xi-api-key": FAKE_ELEVENLABS_KEY },
    } as never);
    const received: any[] = [];
    const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve(e.code)));
    ws.onmessage = (e) => received.push(receiver.parseOrThrow(JSON.parse(String(e.data))));
    await new Promise((resolve) => (ws.onopen = resolve));
    for (const frame of frames) ws.send(JSON.stringify(serializer.jsonOrThrow(frame)));
    return { code: await closed, received };
  }
  const audioSeconds = (received: any[]) => received.reduce((n, m) => n + (m.audio ? Buffer.from(m.audio, "base64").length : 0), 0) / 2 / 16000;

  test("stream-input: init, text, flush, end of input; real speech with alignment, then isFinal and close 1000", async () => {
    const { code, received } = await session(
      "stream-input",
      [
        { text: " ", voiceSettings: { stability: 0.5, speed: 1.1 }, generationConfig: { chunkLengthSchedule: [50, 120] } },
        { text: "Hello from the socket. ", tryTriggerGeneration: false },
        { text: "More text ", flush: true },
        { text: "" },
      ],
      wire.SendMessage,
      wire.ReceiveMessage,
    );
    expect(code).toBe(1000);
    expect(audioSeconds(received)).toBeGreaterThan(1);
    expect(received.flatMap((m) => m.alignment?.chars ?? []).join("")).toBe("Hello from the socket. More text ");
    expect(received.at(-1)).toEqual({ isFinal: true });
    expect(fake.ttsSockets.at(-1)).toMatchObject({ multi: false, apiKey: FAKE_ELEVENLABS_KEY, query: { model_id: "eleven_flash_v2_5", output_format: "pcm_16000" } });
    expect(fake.ttsSockets.at(-1)!.frames[0]).toEqual({ text: " ", voice_settings: { stability: 0.5, speed: 1.1 }, generation_config: { chunk_length_schedule: [50, 120] } });
  });

  test("multi-stream-input: each closed context answers isFinal with its id; close_socket ends", async () => {
    const { code, received } = await session(
      "multi-stream-input",
      [
        { text: " ", contextId: "a" },
        { text: "First turn. ", contextId: "a" },
        { contextId: "a", text: "", flush: true },
        { contextId: "a", closeContext: true },
        { text: "Second turn. ", contextId: "b" },
        { contextId: "b", closeContext: true },
        { closeSocket: true },
      ],
      wire.SendMessageMulti,
      wire.ReceiveMessageMulti,
    );
    expect(code).toBe(1000);
    const finals = received.filter((m) => m.isFinal).map((m) => m.contextId);
    expect(finals).toEqual(["a", "b"]);
    const lastOfA = received.findIndex((m) => m.isFinal && m.contextId === "a");
    expect(received.slice(0, lastOfA).every((m) => m.contextId === "a")).toBe(true);
    expect(audioSeconds(received)).toBeGreaterThan(1);
  });
});

describe("Scribe realtime, through the SDK's realtime client", () => {
  const realtime = () => client.speechToText.realtime;
  const chunks = (pcm: Uint8Array, size = 3200) => Array.from({ length: Math.ceil(pcm.length / size) }, (_, i) => Buffer.from(pcm.subarray(i * size, (i + 1) * size)).toString("base64"));
  const utterance = () => Buffer.concat([speech("Thank you very much for your help.", 16000), new Uint8Array(64_000)]);

  test("manual commits: session_started, partials, committed transcript with timestamps; query names as the SDK sends them", async () => {
    const conn = await realtime().connect({
      modelId: "scribe_v2_realtime",
      audioFormat: AudioFormat.PCM_16000,
      sampleRate: 16000,
      commitStrategy: CommitStrategy.MANUAL,
      includeTimestamps: true,
      languageCode: "en",
      keyterms: ["voxroute"],
    });
    const seen: any[] = [];
    for (const type of [RealtimeEvents.SESSION_STARTED, RealtimeEvents.PARTIAL_TRANSCRIPT, RealtimeEvents.COMMITTED_TRANSCRIPT, RealtimeEvents.COMMITTED_TRANSCRIPT_WITH_TIMESTAMPS]) {
      conn.on(type, (m: unknown) => seen.push(wire.ReceiveTranscription.parseOrThrow(m)));
    }
    const timed = new Promise((resolve) => conn.on(RealtimeEvents.COMMITTED_TRANSCRIPT_WITH_TIMESTAMPS, resolve));
    await new Promise((resolve) => conn.on(RealtimeEvents.OPEN, resolve));
    const audio = utterance();
    for (const audioBase64 of chunks(audio)) conn.send({ audioBase64 });
    conn.commit();
    await timed;
    conn.close();
    const types = seen.map((m) => m.messageType);
    expect(types[0]).toBe("session_started");
    expect(types).toContain("partial_transcript");
    expect(types.slice(-2)).toEqual(["committed_transcript", "committed_transcript_with_timestamps"]);
    expect(seen.at(-2).text).toBe("Thank you very much for your help.");
    expect(seen.at(-1).words.filter((w: any) => w.type === "word").length).toBe(7);
    const sent = fake.scribeSockets.at(-1)!;
    expect(Object.fromEntries(sent.query)).toMatchObject({
      model_id: "scribe_v2_realtime",
      audio_format: "pcm_16000",
      commit_strategy: "manual",
      include_timestamps: "true",
      language_code: "en",
      keyterms: "voxroute",
    });
    expect(sent.apiKey).toBe(FAKE_ELEVENLABS_KEY);
    expect(JSON.parse(sent.texts.at(-1)!)).toEqual({ message_type: "input_audio_chunk", audio_base_64: "", commit: true, sample_rate: 16000 });
    expect(sent.received.digest()).toEqual(digestOf([audio]));
  });

  test("commit_strategy=vad: the fake commits by itself after the configured silence", async () => {
    const conn = await realtime().connect({ modelId: "scribe_v2_realtime", audioFormat: AudioFormat.PCM_16000, sampleRate: 16000, commitStrategy: CommitStrategy.VAD, vadSilenceThresholdSecs: 0.5 });
    const committed = new Promise<any>((resolve) => conn.on(RealtimeEvents.COMMITTED_TRANSCRIPT, resolve));
    await new Promise((resolve) => conn.on(RealtimeEvents.OPEN, resolve));
    for (const audioBase64 of chunks(utterance())) conn.send({ audioBase64 });
    expect((await committed).text).toBe("Thank you very much for your help.");
    conn.close();
    expect(fake.scribeSockets.at(-1)!.query.get("vad_silence_threshold_secs")).toBe("0.5");
  });

  test("an injected transcriber_error reaches the SDK as an error event; a refused handshake as a socket error", async () => {
    fake.fault("error");
    const conn = await realtime().connect({ modelId: "scribe_v2_realtime", audioFormat: AudioFormat.PCM_16000, sampleRate: 16000 });
    conn.on(RealtimeEvents.ERROR, () => {});
    const failed = new Promise<any>((resolve) => conn.on(RealtimeEvents.TRANSCRIBER_ERROR, resolve));
    await new Promise((resolve) => conn.on(RealtimeEvents.OPEN, resolve));
    conn.send({ audioBase64: chunks(utterance())[0]! });
    expect(await failed).toMatchObject({ message_type: "transcriber_error", error: expect.any(String) });

    const refused = await new ElevenLabsClient({ apiKey: "wrong", baseUrl: fake.url }).speechToText.realtime.connect({
      modelId: "scribe_v2_realtime",
      audioFormat: AudioFormat.PCM_16000,
      sampleRate: 16000,
    });
    expect(await new Promise<any>((resolve) => refused.on(RealtimeEvents.ERROR, resolve))).toBeInstanceOf(Error);
  });
});
