import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type ElevenLabsClient, ElevenLabsError } from "@elevenlabs/elevenlabs-js";
import * as wire from "@elevenlabs/elevenlabs-js/serialization";
import { ProviderError } from "../src/errors.ts";
import type { TtsProvider, TtsStream } from "../src/providers/types.ts";
import { AlignmentTimeline } from "../src/sessions/tts-alignment.ts";
import { FAKE_CARTESIA_VOICE, startFakeCartesia } from "./fakes/cartesia.ts";
import { FAKE_VOICE, startFakeElevenLabs } from "./fakes/elevenlabs.ts";
import { FixedPcmProvider, streamDyingOnFlush, TEST_MODEL, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { speech } from "./fakes/http-fake.ts";
import { cartesiaAt, elevenLabsAt } from "./fakes/server-env.ts";
import { ffprobe, mp3SecondsBefore } from "./helpers/ffprobe.ts";
import { startServerWithElevenLabsSdk } from "./helpers/sdk-clients.ts";
import { stopServerAndFakes, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// Character timings (ElevenLabs' alignment) through the official SDK: `convertWithTimestamps` and
// `streamWithTimestamps` on the HTTP endpoints, and `stream-input` with `sync_alignment=true` read
// with the SDK's own message schema; from the embedded engines (computed), and ElevenLabs and
// Cartesia (their own timings, through their fakes). Every alignment is checked to be the text,
// in order, with times that never go back and end within the audio ffmpeg decodes.

/** Says what it was given is timed, then fails before any audio: its timings must not reach the client. */
class TimedThenBroken implements TtsProvider {
  readonly id = "timed-broken";
  async open(): Promise<TtsStream> {
    let text = "";
    return streamDyingOnFlush(
      (queue) => {
        queue.push({ type: "alignment", alignment: { chars: [...text], starts: [...text].map(() => 0), ends: [...text].map(() => 0) } });
        queue.fail(new ProviderError("upstream returned 500", true));
      },
      (t) => void (text += t),
    );
  }
  async voices() {
    return [];
  }
}

const elevenlabs = startFakeElevenLabs();
const cartesia = startFakeCartesia();
let server: TestServer;
let client: ElevenLabsClient;
beforeAll(async () => {
  ({ server, client } = await startServerWithElevenLabsSdk(
    { ...elevenLabsAt(elevenlabs), ...cartesiaAt(cartesia) },
    { extra: { catalogue: testCatalogue(["fixed", "timed-broken"]), providers: [new FixedPcmProvider("fixed", 5), new TimedThenBroken()] } },
  ));
});
afterAll(() => stopServerAndFakes(server, elevenlabs, cartesia));

const TEXT = "Hello there, my friend. The router times every character of this text, pauses and all.";

interface Timed {
  characters: string[];
  starts: number[];
  ends: number[];
}
const fromSdk = (a: { characters: string[]; characterStartTimesSeconds: number[]; characterEndTimesSeconds: number[] } | undefined): Timed => ({
  characters: a?.characters ?? [],
  starts: a?.characterStartTimesSeconds ?? [],
  ends: a?.characterEndTimesSeconds ?? [],
});

/** The text, character by character in order; times never going back; the last end within the audio and not far before its end. */
function expectTimings(timed: Timed, text: string, audioSeconds: number) {
  expect(timed.characters.join("")).toBe(text);
  expect(timed.starts).toHaveLength(timed.characters.length);
  expect(timed.ends).toHaveLength(timed.characters.length);
  timed.starts.forEach((start, i) => {
    expect(timed.ends[i]).toBeGreaterThanOrEqual(start);
    if (i) expect(start).toBeGreaterThanOrEqual(timed.starts[i - 1]);
  });
  expect(timed.starts[0]).toBeGreaterThanOrEqual(0);
  expect(timed.ends.at(-1)!).toBeLessThanOrEqual(audioSeconds + 0.001);
  expect(timed.ends.at(-1)!).toBeGreaterThan(audioSeconds * 0.6); // spread over the speech, not squeezed at its start
}

/** Times as they come over the wire: to the millisecond at most (`0.4`, never float noise such as `0.39980000000000004`). */
function expectMilliseconds(timed: Timed) {
  const times = [...timed.starts, ...timed.ends];
  expect(times.length).toBeGreaterThan(0);
  for (const t of times) expect(JSON.stringify(t)).toMatch(/^\d+(\.\d{1,3})?$/);
}

const ENGINES = [
  { model: "flite", voice: "slt" },
  { model: "svox-pico/pico", voice: "en-US" },
  { model: "espeak-ng", voice: "en-us" },
];

describe("POST …/with-timestamps (convertWithTimestamps)", () => {
  for (const { model, voice } of ENGINES) {
    test(`${model}: the audio and every character's time in it, the normalized text the same`, async () => {
      const res = await client.textToSpeech.convertWithTimestamps(voice, { text: TEXT, modelId: model, outputFormat: "pcm_16000" });
      const seconds = Buffer.from(res.audioBase64, "base64").byteLength / 2 / 16000;
      expect(seconds).toBeGreaterThan(3);
      expectTimings(fromSdk(res.alignment), TEXT, seconds);
      expectMilliseconds(fromSdk(res.alignment));
      expect(res.normalizedAlignment).toEqual(res.alignment!);
    });
  }

  test("flite, default mp3_44100_128: the timings fall within the MP3 ffmpeg decodes, and follow Flite's pauses", async () => {
    const res = await client.textToSpeech.convertWithTimestamps("slt", { text: TEXT, modelId: "flite" });
    const probed = await ffprobe(Buffer.from(res.audioBase64, "base64"), "mp3");
    expect(probed).toMatchObject({ codec: "mp3", sampleRate: 44100 });
    const timed = fromSdk(res.alignment);
    expectTimings(timed, TEXT, probed.seconds);
    // Flite's leading pause is no character's, and the comma's pause lies between "there," and "my".
    expect(timed.starts[0]).toBeGreaterThan(0.05);
    const comma = TEXT.indexOf(",");
    expect(timed.starts[comma + 2] - timed.ends[comma]).toBeGreaterThan(0.05);
  });

  test("ElevenLabs: its own timings, asked with sync_alignment on its socket", async () => {
    const res = await client.textToSpeech.convertWithTimestamps(FAKE_VOICE, { text: TEXT, modelId: "elevenlabs/eleven_flash_v2_5" });
    expect(elevenlabs.ttsSockets.at(-1)!.query.sync_alignment).toBe("true");
    const probed = await ffprobe(Buffer.from(res.audioBase64, "base64"), "mp3");
    expectTimings(fromSdk(res.alignment), TEXT, probed.seconds);
    expectTimings(fromSdk(res.normalizedAlignment), TEXT, probed.seconds);
    expectMilliseconds(fromSdk(res.alignment));
    expectMilliseconds(fromSdk(res.normalizedAlignment));
  });

  test("ElevenLabs with transport=http: its stream/with-timestamps answers, sentence by sentence, laid end to end", async () => {
    const res = await client.textToSpeech.convertWithTimestamps(FAKE_VOICE, { text: TEXT, modelId: "elevenlabs/eleven_flash_v2_5", outputFormat: "pcm_24000" }, { queryParams: { transport: "http" } });
    const asked = elevenlabs.requests.slice(-2);
    expect(asked.map((r) => [r.path, r.body.text])).toEqual([
      [`/v1/text-to-speech/${FAKE_VOICE}/stream/with-timestamps`, "Hello there, my friend."],
      [`/v1/text-to-speech/${FAKE_VOICE}/stream/with-timestamps`, "The router times every character of this text, pauses and all."],
    ]);
    const seconds = Buffer.from(res.audioBase64, "base64").byteLength / 2 / 24000;
    const timed = fromSdk(res.alignment);
    expectTimings(timed, TEXT, seconds);
    expectMilliseconds(timed);
    // The second sentence's times start where the first sentence's audio (the fake's Flite speech) ends.
    const firstSeconds = speech("Hello there, my friend.", 24000).byteLength / 2 / 24000;
    expect(timed.starts[TEXT.indexOf("The")]).toBeCloseTo(firstSeconds, 2);
  });

  test("Cartesia: its word timestamps spread over their words, over its WebSocket even for MP3", async () => {
    const res = await client.textToSpeech.convertWithTimestamps(FAKE_CARTESIA_VOICE, { text: TEXT, modelId: "cartesia/sonic-3" });
    expect(cartesia.ttsSockets.at(-1)!.messages.some((m) => m.add_timestamps === true)).toBe(true);
    const probed = await ffprobe(Buffer.from(res.audioBase64, "base64"), "mp3");
    const timed = fromSdk(res.alignment);
    expectTimings(timed, TEXT, probed.seconds);
    expectMilliseconds(timed);
    // Each word's characters lie within the word's span: "character" is one of the later words.
    const word = TEXT.indexOf("character");
    expect(timed.starts[word + 1]).toBeGreaterThan(timed.starts[word]);
  });

  test("a provider that gives no timings: the audio, alignment null", async () => {
    const res = await client.textToSpeech.convertWithTimestamps("any", { text: "Tone.", modelId: "fixed/echo", outputFormat: "pcm_16000" });
    expect(Buffer.from(res.audioBase64, "base64").byteLength).toBeGreaterThan(0);
    expect(res.alignment).toBeUndefined();
    expect(res.normalizedAlignment).toBeUndefined();
  });
});

describe("POST …/stream/with-timestamps (streamWithTimestamps)", () => {
  test("flite: newline-delimited chunks whose audio joins into the whole MP3 and whose timings join into the text, across sentences", async () => {
    const chunks = [];
    for await (const chunk of await client.textToSpeech.streamWithTimestamps("slt", { text: TEXT, modelId: "flite" })) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(1);
    const audio = Buffer.concat(chunks.map((c) => Buffer.from(c.audioBase64, "base64")));
    const probed = await ffprobe(audio, "mp3");
    const whole = await client.textToSpeech.convertWithTimestamps("slt", { text: TEXT, modelId: "flite" });
    expect(Math.abs(probed.seconds - (await ffprobe(Buffer.from(whole.audioBase64, "base64"), "mp3")).seconds)).toBeLessThan(0.03);
    const timed = chunks.map((c) => fromSdk(c.alignment));
    const joined = { characters: timed.flatMap((t) => t.characters), starts: timed.flatMap((t) => t.starts), ends: timed.flatMap((t) => t.ends) };
    expectTimings(joined, TEXT, probed.seconds);
    expectMilliseconds(joined);
    expect(joined).toEqual(fromSdk(whole.alignment)); // the same engine timings, however they are framed
  });

  test("the body is JSON lines as ElevenLabs streams them", async () => {
    const res = await fetch(`${server.url}/el/v1/text-to-speech/slt/stream/with-timestamps?output_format=pcm_16000`, {
      method: "POST",
      headers: { "xi-api-key": server.key, "content-type": "application/json" },
      body: JSON.stringify({ text: "Short one.", model_id: "flite" }),
    });
    expect(res.status).toBe(200);
    const lines = (await res.text()).split("\n");
    expect(lines.at(-1)).toBe("");
    const first = JSON.parse(lines[0]);
    expect(Object.keys(first)).toEqual(["audio_base64", "alignment", "normalized_alignment"]);
    expect(Object.keys(first.alignment)).toEqual(["characters", "character_start_times_seconds", "character_end_times_seconds"]);
  });
});

describe("forged requests", () => {
  const post = (path: string, body: unknown, query = "") =>
    fetch(`${server.url}/el/v1/text-to-speech/slt/${path}${query}`, { method: "POST", headers: { "xi-api-key": server.key, "content-type": "application/json" }, body: JSON.stringify(body) });

  for (const path of ["with-timestamps", "stream/with-timestamps"]) {
    test(`${path}: empty text is 400 invalid_request naming text, as on the plain endpoint`, async () => {
      const err = await client.textToSpeech.convertWithTimestamps("slt", { text: "", modelId: "flite" }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ElevenLabsError);
      expect((err as ElevenLabsError).statusCode).toBe(400);
      const res = await post(path, { text: "", model_id: "flite" });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { detail: unknown }).detail).toMatchObject({ status: "invalid_request", param: "text" });
    });

    test(`${path}: an unknown output_format is 400 invalid_output_format; no model is 400 model_required`, async () => {
      const bad = await post(path, { text: "Hi.", model_id: "flite" }, "?output_format=flac_44100");
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { detail: unknown }).detail).toMatchObject({ status: "invalid_output_format", param: "output_format" });
      const noModel = await post(path, { text: "Hi." });
      expect(noModel.status).toBe(400);
      expect(((await noModel.json()) as { detail: unknown }).detail).toMatchObject({ status: "model_required" });
    });
  }

  test("stream-input: sync_alignment that is not a boolean is 400 before the upgrade", async () => {
    const res = await fetch(`${server.url}/el/v1/text-to-speech/slt/stream-input?model_id=flite&sync_alignment=sometimes`, {
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "xi-api-key": server.key },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { detail: unknown }).detail).toMatchObject({ status: "invalid_request", param: "sync_alignment" });
  });
});

describe("stream-input with sync_alignment=true, read with the SDK's message schema", () => {
  const PIECES = ["Hello there, ", "my friend. ", "The router times every character ", "of this text, pauses and all. "];

  type Frame = { audio?: string; alignment?: { chars?: string[]; charStartTimesMs?: number[]; charDurationsMs?: number[] }; isFinal?: boolean | null };

  /** How long the first n bytes of the whole audio are: for raw 16-bit PCM at `rate`, and for MP3 as ffmpeg finds its frames. */
  type Lengths = (audio: Uint8Array) => Promise<(bytes: number) => number>;
  const pcmSeconds =
    (rate: number): Lengths =>
    async () =>
    (bytes) =>
      bytes / 2 / rate;
  const mp3Seconds: Lengths = mp3SecondsBefore;

  /**
   * The timings of one socket's frames, parsed by the SDK, laid end to end: each audio frame's
   * start on the stream is the length of all the audio before it.
   */
  async function session(voice: string, model: string, outputFormat: string, lengths: Lengths) {
    const c = connect(server.wsUrl(`/el/v1/text-to-speech/${voice}/stream-input?model_id=${model}&output_format=${outputFormat}&sync_alignment=true`), { "xi-api-key": server.key });
    // A flush after the second piece: the providers' timings go on across it (ElevenLabs opens a new context there, Cartesia answers it with flush_done).
    for (const frame of [{ text: " " }, ...PIECES.map((text, i) => ({ text, ...(i === 1 ? { flush: true } : {}) })), { text: "" }]) c.send(wire.SendMessage.jsonOrThrow(frame));
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    // Audio frames carry `isFinal: null` as ElevenLabs' own do, which the schema does not list: passed through.
    const frames: Frame[] = rec.events.map((e) => wire.ReceiveMessage.parseOrThrow(e, { unrecognizedObjectKeys: "passthrough" }));
    const timed: Timed = { characters: [], starts: [], ends: [] };
    const audioFrames = frames.filter((f) => f.audio !== undefined).map((f) => ({ ...f, bytes: Buffer.from(f.audio!, "base64") }));
    const lengthOf = await lengths(Buffer.concat(audioFrames.map((f) => f.bytes)));
    let bytesBefore = 0;
    for (const f of audioFrames) {
      const at = lengthOf(bytesBefore);
      bytesBefore += f.bytes.byteLength;
      const { chars, charStartTimesMs: starts, charDurationsMs: durations } = f.alignment!; // every audio frame has one
      chars!.forEach((ch, i) => {
        timed.characters.push(ch);
        timed.starts.push(at + starts![i] / 1000);
        timed.ends.push(at + (starts![i] + durations![i]) / 1000);
        expect(starts![i]).toBeGreaterThanOrEqual(0); // timed from the frame's own start
        expect([starts![i], durations![i]].every(Number.isInteger)).toBe(true); // whole ms, as ElevenLabs' socket gives them
      });
    }
    expect(frames.at(-1)).toEqual({ isFinal: true });
    return { timed, seconds: lengthOf(bytesBefore) };
  }

  test("flite: chunk-relative timings that lay end to end into the text, within the audio", async () => {
    const { timed, seconds } = await session("slt", "flite", "pcm_16000", pcmSeconds(16000));
    expectTimings(timed, PIECES.join(""), seconds);
  });

  test("flite, default mp3_44100_128 (LAME's, from its PCM): each frame as long as the PCM encoded into it, within the MP3 ffmpeg decodes", async () => {
    const { timed, seconds } = await session("slt", "flite", "mp3_44100_128", mp3Seconds);
    expectTimings(timed, PIECES.join(""), seconds);
  });

  test("ElevenLabs' own MP3 passed through: each frame as long as the MP3 frames it completes, as ffmpeg decodes them", async () => {
    const { timed, seconds } = await session(FAKE_VOICE, "elevenlabs/eleven_flash_v2_5", "mp3_44100_128", mp3Seconds);
    expect(elevenlabs.ttsSockets.at(-1)!.query.output_format).toBe("mp3_44100_128");
    expectTimings(timed, PIECES.join(""), seconds);
  });

  test("ElevenLabs: its frames' timings carried onto the router's frames (resampled to 16 kHz)", async () => {
    const { timed, seconds } = await session(FAKE_VOICE, "elevenlabs/eleven_flash_v2_5", "pcm_16000", pcmSeconds(16000));
    expect(elevenlabs.ttsSockets.at(-1)!.query.sync_alignment).toBe("true");
    expectTimings(timed, PIECES.join(""), seconds);
  });

  test("Cartesia: its word timestamps, audio held until they come", async () => {
    const { timed, seconds } = await session(FAKE_CARTESIA_VOICE, "cartesia/sonic-3", "pcm_24000", pcmSeconds(24000));
    expectTimings(timed, PIECES.join(""), seconds);
  });
});

describe("/v1/tts alignment=true", () => {
  test("service.tts_alignment events time the text before the audio they describe", async () => {
    const c = connect(server.wsUrl("/v1/tts?model=flite&voice=slt&alignment=true"), bearer(server.key));
    c.send({ type: "text", text: TEXT });
    c.send({ type: "close" });
    const rec = await c.closed;
    const timings = rec.events.filter((e) => e.type === "service.tts_alignment");
    expect(rec.order.indexOf("service.tts_alignment")).toBeLessThan(rec.order.indexOf("audio"));
    const joined = { characters: timings.flatMap((t) => t.alignment.characters), starts: timings.flatMap((t) => t.alignment.start_times), ends: timings.flatMap((t) => t.alignment.end_times) };
    expectTimings(joined, TEXT, rec.audio.reduce((n, a) => n + a.byteLength, 0) / 2 / 16000);
  });

  const TIMED = [...ENGINES, { model: "elevenlabs/eleven_flash_v2_5", voice: FAKE_VOICE }, { model: "cartesia/sonic-3", voice: FAKE_CARTESIA_VOICE }];
  for (const { model, voice } of TIMED) {
    test(`${model}: every time to the millisecond, in both alignments`, async () => {
      const c = connect(server.wsUrl(`/v1/tts?model=${model}&voice=${voice}&alignment=true`), bearer(server.key));
      c.send({ type: "text", text: TEXT });
      c.send({ type: "close" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
      const timings = rec.events.filter((e) => e.type === "service.tts_alignment");
      for (const line of ["alignment", "normalized_alignment"]) {
        const timed = { characters: timings.flatMap((t) => t[line].characters), starts: timings.flatMap((t) => t[line].start_times), ends: timings.flatMap((t) => t[line].end_times) };
        expect(timed.characters.join("")).toBe(TEXT);
        expectMilliseconds(timed);
      }
    });
  }

  test("the timings of a provider that failed before any audio never reach the client", async () => {
    const c = connect(server.wsUrl(`/v1/tts?model=${TEST_MODEL}&alignment=true&provider_order=timed-broken,fixed`), bearer(server.key));
    c.send({ type: "text", text: "Tone." });
    c.send({ type: "close" });
    const rec = await c.closed;
    expect(rec.events.filter((e) => e.type === "service.tts_provider_status" && e.status === "failed").map((e) => e.provider)).toEqual(["timed-broken"]);
    expect(rec.audio.length).toBeGreaterThan(0);
    expect(rec.events.filter((e) => e.type === "service.tts_alignment")).toEqual([]);
  });

  test("alignment that is not true or false is 400 before the upgrade", async () => {
    const res = await fetch(`${server.url}/v1/tts?model=flite&voice=slt&alignment=yes`, {
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", ...bearer(server.key) },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "invalid_request", param: "alignment" });
  });
});

describe("a session's timeline", () => {
  const times = (starts: number[]) => ({ chars: starts.map(() => "x"), starts, ends: starts.map((s) => s + 0.1) });

  test("timings before the first audio wait for it; a replaced provider's are dropped; times never go back", () => {
    const timeline = new AlignmentTimeline();
    expect(timeline.add({ type: "alignment", alignment: times([0.5]) }, false)).toEqual([]);
    timeline.drop();
    expect(timeline.add({ type: "alignment", alignment: times([0.2, 0.3]) }, false)).toEqual([]);
    const released = timeline.release();
    expect(released).toEqual([{ type: "alignment", alignment: times([0.2, 0.3]), normalized: times([0.2, 0.3]) }]);
    const [late] = timeline.add({ type: "alignment", alignment: times([0.25, 0.4]) }, true);
    expect(late.alignment.starts).toEqual([0.3, 0.4]);
    expect(late.alignment.ends).toEqual([0.35, 0.5]);
  });
});
