import { afterAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { OpenAIRealtimeWS } from "openai/realtime/ws";
import { speech } from "./fakes/http-fake.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { FAKE_OPENAI_KEY, startFakeOpenAi } from "./fakes/openai.ts";

// The fake must be good enough for the official SDK: otherwise tests against it prove nothing.

const fake = startFakeOpenAi();
afterAll(() => fake.stop());
const client = new OpenAI({ apiKey: FAKE_OPENAI_KEY, baseURL: fake.url, maxRetries: 0 });

describe("the OpenAI fake, through the official SDK", () => {
  test("audio.speech.create streams real 24 kHz PCM", async () => {
    const res = await client.audio.speech.create({ model: "gpt-4o-mini-tts", voice: "alloy", input: "Hello from the fake.", response_format: "pcm" });
    const audio = new Uint8Array(await res.arrayBuffer());
    expect(audio.length / 2 / 24000).toBeGreaterThan(0.8);
    expect(fake.speech.at(-1)!.body).toMatchObject({ model: "gpt-4o-mini-tts", voice: "alloy", response_format: "pcm" });
  });

  test("audio.transcriptions.create answers json and verbose_json", async () => {
    const file = await toFile(new Uint8Array(await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer()), "speech.wav");
    const json = await client.audio.transcriptions.create({ model: "whisper-1", file });
    expect(json.text.length).toBeGreaterThan(0);
    const verbose = await client.audio.transcriptions.create({ model: "whisper-1", file, response_format: "verbose_json" });
    expect(verbose.segments?.length).toBe(1);
  });

  test("errors come as OpenAI error objects the SDK understands", async () => {
    fake.fault("429");
    const err = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "x" }).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err.code).toBe("rate_limit_exceeded");
    const bad = new OpenAI({ apiKey: "sk-wrong", baseURL: fake.url, maxRetries: 0 });
    expect(await bad.audio.speech.create({ model: "tts-1", voice: "alloy", input: "x" }).catch((e) => e)).toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe("the OpenAI realtime fake, through the SDK's OpenAIRealtimeWS", () => {
  // The SDK connects to wss: only, so this fake serves TLS with the loopback self-signed certificate.
  const secure = startFakeOpenAi({ tls: true });
  afterAll(() => secure.stop());
  const open = (apiKey = FAKE_OPENAI_KEY) => {
    const rt = new OpenAIRealtimeWS({ intent: "transcription", options: { ca: secure.certificate } }, new OpenAI({ apiKey, baseURL: secure.url }));
    const events: Record<string, any>[] = [];
    const errors: Error[] = [];
    rt.on("event", (e) => void events.push(e));
    rt.on("error", (e) => void errors.push(e));
    const opened = new Promise<void>((resolve, reject) => {
      rt.socket.on("open", () => resolve());
      rt.socket.on("error", reject);
    });
    return { rt, events, errors, opened };
  };
  const until = async (events: Record<string, any>[], type: string) => {
    for (let i = 0; i < 200 && !events.some((e) => e.type === type); i++) await Bun.sleep(10);
    return events.find((e) => e.type === type);
  };

  test("a transcription session: server VAD turns real speech into committed, delta and completed events", async () => {
    const { rt, events, errors, opened } = open();
    await opened;
    rt.send({
      type: "session.update",
      session: {
        type: "transcription",
        audio: {
          input: { format: { type: "audio/pcm", rate: 24000 }, transcription: { model: "gpt-4o-transcribe", language: "en" }, turn_detection: { type: "server_vad", silence_duration_ms: 300 } },
        },
      },
    });
    const pcm = speech("Thank you very much for your help.", 24000);
    for (let i = 0; i < pcm.length; i += 4800) rt.send({ type: "input_audio_buffer.append", audio: Buffer.from(pcm.subarray(i, i + 4800)).toString("base64") });
    rt.send({ type: "input_audio_buffer.append", audio: Buffer.alloc(24000).toString("base64") }); // 0.5 s of silence
    const completed = await until(events, "conversation.item.input_audio_transcription.completed");
    rt.close();
    expect(errors).toEqual([]);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 5)).toEqual(["session.created", "session.updated", "input_audio_buffer.speech_started", "input_audio_buffer.speech_stopped", "input_audio_buffer.committed"]);
    expect(events[1].session.audio.input).toMatchObject({
      transcription: { model: "gpt-4o-transcribe", language: "en" },
      turn_detection: { type: "server_vad", silence_duration_ms: 300, threshold: 0.5 },
    });
    const itemId = events[4].item_id;
    expect(events.filter((e) => e.type.endsWith("transcription.delta")).every((e) => e.item_id === itemId)).toBe(true);
    expect(completed).toMatchObject({ item_id: itemId, transcript: expect.stringMatching(/^Thank you very much/) });
    expect(events[3].audio_end_ms).toBeGreaterThan(events[2].audio_start_ms);
    expect(secure.realtime.at(-1)!.authorization).toBe(`Bearer ${FAKE_OPENAI_KEY}`);
    expect(secure.realtime.at(-1)!.query.get("intent")).toBe("transcription");
    expect(secure.realtime.at(-1)!.received.digest()).toEqual(digestOf([pcm, new Uint8Array(24000)]));
  });

  test("manual commits, an empty commit and invalid settings come back as the SDK's error events", async () => {
    const { rt, events, errors, opened } = open();
    await opened;
    rt.send({ type: "session.update", session: { type: "transcription", audio: { input: { transcription: { model: "gpt-nope" }, turn_detection: null } } } });
    rt.send({ type: "session.update", session: { type: "transcription", audio: { input: { transcription: { model: "gpt-4o-mini-transcribe" }, turn_detection: null } } } });
    rt.send({ type: "input_audio_buffer.commit" });
    rt.send({ type: "input_audio_buffer.append", audio: Buffer.from(speech("Hello.", 24000)).toString("base64") });
    rt.send({ type: "input_audio_buffer.commit" });
    await until(events, "conversation.item.input_audio_transcription.completed");
    rt.close();
    expect(errors.map((e) => (e as any).error?.code)).toEqual(["invalid_value", "input_audio_buffer_commit_empty"]);
    expect(events.some((e) => e.type === "input_audio_buffer.speech_started")).toBe(false);
    expect(events.find((e) => e.type === "input_audio_buffer.committed")).toMatchObject({ previous_item_id: null });
  });

  test("browsers authenticate with the subprotocol pair the SDK's OpenAIRealtimeWebSocket sends", async () => {
    const plain = startFakeOpenAi();
    const ws = new WebSocket(`${plain.url.replace(/^http/, "ws")}/realtime?intent=transcription`, ["realtime", `openai-insecure-api-key.${FAKE_OPENAI_KEY}`]);
    const first = await new Promise<Record<string, any>>((resolve, reject) => {
      ws.onmessage = (e) => resolve(JSON.parse(String(e.data)));
      ws.onerror = reject;
    });
    expect(ws.protocol).toBe("realtime");
    expect(first).toMatchObject({ type: "session.created", session: { type: "transcription" } });
    ws.close();
    plain.stop();
  });

  test("a wrong key fails the handshake", async () => {
    const { rt, opened } = open("sk-wrong");
    rt.on("error", () => {});
    expect(await opened.catch((e) => e)).toBeInstanceOf(Error);
  });
});
