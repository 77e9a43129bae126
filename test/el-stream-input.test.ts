import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TtsStream, TtsStreamRequest } from "../src/providers/types.ts";
import { BrokenProvider, FixedPcmProvider, testCatalogue } from "./fakes/fixed-pcm-provider.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { ffprobe } from "./helpers/ffprobe.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect, peak, type Recording } from "./helpers/ws-client.ts";

// `/el/v1/text-to-speech/{voice_id}/stream-input` driven frame by frame as ElevenLabs documents
// it, over real sockets, against the embedded engines and a PCM-only test provider.

/** The fixed test provider, remembering what each session asked it for. */
class RecordingProvider extends FixedPcmProvider {
  readonly requests: TtsStreamRequest[] = [];
  override open(req: TtsStreamRequest): Promise<TtsStream> {
    this.requests.push(req);
    return super.open(req);
  }
}

let server: TestServer;
const fixed = new RecordingProvider("fixed", 2);
beforeAll(async () => {
  server = await startTestServer({}, { extra: { catalogue: testCatalogue(["fixed", "late-dying"]), providers: [fixed, new BrokenProvider("late-dying", "fail-after-audio")] } });
});
afterAll(() => server.stop(0));

const url = (voice: string, query: string) => server.wsUrl(`/el/v1/text-to-speech/${voice}/stream-input?${query}`);
const init = (extra: Record<string, unknown> = {}) => ({
  text: " ",
  voice_settings: { stability: 0.5, similarity_boost: 0.8 },
  generation_config: { chunk_length_schedule: [120, 160, 250, 290] },
  ...extra,
});
const xi = (key: string) => ({ "xi-api-key": key });

/** Every audio frame's bytes, in order; every frame must be JSON text (no binary frames). */
function audioOf(rec: Recording): Uint8Array {
  expect(rec.audio).toEqual([]);
  const frames = rec.events.filter((e) => typeof e.audio === "string");
  for (const f of frames) expect(f).toEqual({ audio: expect.any(String), isFinal: null, normalizedAlignment: null, alignment: null });
  return Buffer.concat(frames.map((f) => Buffer.from(f.audio, "base64")));
}

async function speak(query: string, texts: string[], headers: Record<string, string>) {
  const c = connect(url("slt", query), headers);
  c.send(init());
  for (const text of texts) c.send({ text });
  c.send({ text: "" });
  return audioOf(await c.closed);
}

async function upgrade(path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/el/v1/text-to-speech/${path}`, {
    headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", ...headers },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("stream-input as ElevenLabs documents it", () => {
  test("key in the init frame, text chunks, try_trigger_generation, flush, closing empty text: audio, isFinal, 1000, billed on el", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(url("slt", "model_id=flite&output_format=pcm_16000"));
    c.send(init({ xi_api_key: key }));
    c.send({ text: "Hello from ", try_trigger_generation: true });
    c.send({ text: "the router. " });
    c.send({ text: "And a second sentence ", flush: true });
    c.send({ text: "" });
    const rec = await c.closed;

    expect(rec.close.code).toBe(1000);
    expect(rec.events.at(-1)).toEqual({ isFinal: true });
    const pcm = audioOf(rec);
    const seconds = pcm.byteLength / 2 / 16000;
    expect(seconds).toBeGreaterThan(1.5);
    expect(seconds).toBeLessThan(8);
    expect(peak([pcm])).toBeGreaterThan(1000);
    expect(await lastActivity(server, tenantId)).toMatchObject({ surface: "el", provider: "flite", usageUnit: "characters", usageAmount: 45, status: "completed" });
  });

  test("the init frame's key may be spelled xi-api-key or sent as authorization: Bearer", async () => {
    for (const field of [{ "xi-api-key": server.key }, { authorization: `Bearer ${server.key}` }]) {
      const c = connect(url("slt", "model_id=flite&output_format=pcm_16000"));
      c.send(init(field));
      c.send({ text: "Hi. " });
      c.send({ text: "" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
      expect(audioOf(rec).byteLength).toBeGreaterThan(0);
    }
  });

  test("header auth (xi-api-key or Bearer); the default output is MP3", async () => {
    const mp3 = await speak("model_id=flite", ["One MP3 please. "], xi(server.key));
    expect(mp3[0] === 0xff && (mp3[1] & 0xe0) === 0xe0).toBe(true);
    expect((await speak("model_id=cmu/flite&output_format=pcm_16000", ["Bearer works. "], bearer(server.key))).byteLength).toBeGreaterThan(0);
  });

  test("pcm at another rate than the engine's is resampled", async () => {
    const at16 = await speak("model_id=flite&output_format=pcm_16000", ["Same length. "], xi(server.key));
    const at24 = await speak("model_id=flite&output_format=pcm_24000", ["Same length. "], xi(server.key));
    expect(Math.abs(at24.byteLength / at16.byteLength - 1.5)).toBeLessThan(0.01);
  });

  test("ulaw_8000 and alaw_8000: one byte per sample at 8 kHz, companded", async () => {
    const at16 = await speak("model_id=flite&output_format=pcm_16000", ["Telephone line. "], xi(server.key));
    const ulaw = await speak("model_id=flite&output_format=ulaw_8000", ["Telephone line. "], xi(server.key));
    const alaw = await speak("model_id=flite&output_format=alaw_8000", ["Telephone line. "], xi(server.key));
    expect(Math.abs(ulaw.byteLength / (at16.byteLength / 4) - 1)).toBeLessThan(0.02);
    expect(alaw.byteLength).toBe(ulaw.byteLength);
    expect(ulaw).not.toEqual(alaw);
  });

  test("mp3_<rate>_<bitrate> and opus_48000_<bitrate> are encoded from the engine's PCM, the encoder's last frames before isFinal", async () => {
    const text = ["Encoded as it comes. ", "Then the rest."];
    const pcmSeconds = (await speak("model_id=flite&output_format=pcm_16000", text, xi(server.key))).byteLength / 2 / 16000;
    for (const [format, expected, tolerance] of [
      ["mp3_22050_32", { codec: "mp3", sampleRate: 22050, bitRate: 32_000 }, 0.1],
      ["mp3_44100_128", { codec: "mp3", sampleRate: 44100, bitRate: 128_000 }, 0.1], // the default; Flite's own MP3 is 16 kHz
      ["opus_48000_64", { codec: "opus", sampleRate: 48000 }, 0.01],
    ] as const) {
      const c = connect(url("slt", `model_id=flite&output_format=${format}`), xi(server.key));
      c.send(init());
      for (const t of text) c.send({ text: t });
      c.send({ text: "" });
      const rec = await c.closed;
      expect(rec.close.code).toBe(1000);
      expect(rec.events.at(-1)).toEqual({ isFinal: true });
      const probed = await ffprobe(audioOf(rec), format.startsWith("mp3") ? "mp3" : "ogg");
      expect(probed).toMatchObject({ ...expected, channels: 1 });
      expect(Math.abs(probed.seconds - pcmSeconds)).toBeLessThan(tolerance); // LAME pads a frame or two; Ogg's granule trims Opus exactly
    }
  });

  test("flush mid-stream: the first sentence's audio arrives before the input ends", async () => {
    const c = connect(url("slt", "model_id=flite&output_format=pcm_16000"), xi(server.key));
    c.send(init());
    c.send({ text: "First part", flush: true });
    while (!c.rec.events.some((e) => e.audio)) await Bun.sleep(20);
    expect(c.rec.close.code).toBe(0); // still open
    c.send({ text: "" });
    expect((await c.closed).close.code).toBe(1000);
  });
});

describe("provider options", () => {
  test("query keys, the bracket form (which wins) and the init frame's settings reach the provider, normalized", async () => {
    const query = [
      "model_id=fixed/echo",
      "output_format=pcm_16000",
      "auto_mode=TRUE",
      "apply_text_normalization=Off",
      "language_code=de",
      "emotion=calm",
      "provider_options[emotion]=Happy",
      "enable_logging=false",
      "inactivity_timeout=30",
    ].join("&");
    const c = connect(url("my:voice@1", query), xi(server.key));
    c.send(init({ voice_settings: { stability: 0.3, use_speaker_boost: true, unknown_setting: 1 } }));
    c.send({ text: "x" });
    c.send({ text: "" });
    const rec = await c.closed;
    expect(rec.close.code).toBe(1000);
    const req = fixed.requests.at(-1)!;
    expect(req.voice).toBe("my:voice@1");
    expect(req.options).toEqual({
      auto_mode: "true",
      apply_text_normalization: "off",
      language_code: "de",
      emotion: "Happy",
      enable_logging: "false",
      inactivity_timeout: "30",
      stability: "0.3",
      use_speaker_boost: "true",
      chunk_length_schedule: "120,160,250,290",
    });
  });
});

describe("before the upgrade", () => {
  test("query errors answer 400 in the {detail} envelope", async () => {
    expect(await upgrade("slt/stream-input")).toMatchObject({ status: 400, body: { detail: { status: "model_required" } } });
    expect(await upgrade("slt/stream-input?model_id=fixed/echo&output_format=mp3_44100_128")).toMatchObject({ status: 400, body: { detail: { status: "invalid_output_format" } } });
    expect(await upgrade("slt/stream-input?model_id=fixed/echo&output_format=mp3_22050_32")).toMatchObject({ status: 400, body: { detail: { status: "invalid_output_format" } } }); // encoded here, yet refused as the interface says
    expect(await upgrade("slt/stream-input?model_id=flite&output_format=wav_16000")).toMatchObject({ status: 400, body: { detail: { status: "invalid_output_format" } } }); // no place for a WAV header in the frames
    expect(await upgrade("slt/stream-input?model_id=flite&inactivity_timeout=181")).toMatchObject({ status: 400, body: { detail: { status: "invalid_request" } } });
    expect(await upgrade("slt/stream-input?model_id=flite&auto_mode=maybe")).toMatchObject({ status: 400, body: { detail: { status: "invalid_request" } } });
  });

  test("a refused output_format is told only the formats the socket takes: no wav_<rate>", async () => {
    const told = (format: string) => upgrade(`slt/stream-input?model_id=flite&output_format=${format}`).then((r) => ({ status: r.status, detail: r.body.detail as Record<string, string> }));
    const socketFormats = "mp3_<rate>_<bitrate>, opus_48000_<bitrate>, pcm_<rate>, ulaw_8000 or alaw_8000";
    for (const format of ["wav_16000", "flac_44100"]) {
      const { status, detail } = await told(format);
      expect(status).toBe(400);
      expect(detail).toMatchObject({ status: "invalid_output_format", param: "output_format" });
      expect(detail.message).toBe(`output_format ${format} is not offered here: use ${socketFormats}`);
    }
    // The HTTP endpoints do make WAV, and say so.
    const http = await fetch(`${server.url}/el/v1/text-to-speech/slt?output_format=flac_44100`, {
      method: "POST",
      headers: { ...xi(server.key), "content-type": "application/json" },
      body: JSON.stringify({ text: "Hi.", model_id: "flite" }),
    });
    expect(http.status).toBe(400);
    expect(((await http.json()) as { detail: { message: string } }).detail.message).toContain("pcm_<rate>, wav_<rate>, ulaw_8000");
  });

  test("a known header key whose account cannot pay: 402", async () => {
    const { key } = await fundedAccount(server, 0);
    expect(await upgrade("slt/stream-input?model_id=flite", xi(key))).toMatchObject({ status: 402, body: { detail: { status: "insufficient_balance" } } });
  });

  test("a plain GET answers 426 websocket_upgrade_required", async () => {
    const res = await fetch(`${server.url}/el/v1/text-to-speech/slt/stream-input?model_id=flite`);
    expect(res.status).toBe(426);
    expect(await res.json()).toMatchObject({ detail: { status: "websocket_upgrade_required", message: expect.any(String) } });
  });
});

describe("closes after the upgrade", () => {
  const run = async (query: string, headers: Record<string, string>, frames: unknown[]) => {
    const c = connect(url("slt", query), headers);
    for (const f of frames) c.send(f);
    return c.closed;
  };

  test("an invalid key (header or init frame) closes 4401 after an error frame; no key at all too", async () => {
    for (const rec of [await run("model_id=flite", xi("vxr_nope"), [init()]), await run("model_id=flite", {}, [init({ xi_api_key: "vxr_nope" })])]) {
      expect(rec.close).toEqual({ code: 4401, reason: JSON.stringify({ error: "invalid_api_key" }) });
      expect(rec.events).toEqual([{ message: expect.any(String), error: "invalid_api_key", code: 4401 }]);
    }
    expect((await run("model_id=flite", {}, [init()])).close).toEqual({ code: 4401, reason: JSON.stringify({ error: "missing_api_key" }) });
  });

  test("preferences that exclude every provider close 4403 provider_not_allowed once the key is known", async () => {
    const rec = await run("model_id=flite&provider_ignore=flite", {}, [init({ xi_api_key: server.key })]);
    expect(rec.close).toEqual({ code: 4403, reason: JSON.stringify({ error: "provider_not_allowed" }) });
  });

  test("a key in the init frame whose account cannot pay closes 4402", async () => {
    const { key } = await fundedAccount(server, 0);
    const rec = await run("model_id=flite", {}, [init({ xi_api_key: key }), { text: "Hello. " }]);
    expect(rec.close).toEqual({ code: 4402, reason: JSON.stringify({ error: "insufficient_balance" }) });
    expect(rec.events).toEqual([{ message: expect.any(String), error: "insufficient_balance", code: 4402 }]);
  });

  test("a frame that breaks the protocol closes 1008 invalid_input_message, as ElevenLabs does", async () => {
    const cases: unknown[][] = [["not json"], [{ voice_settings: {} }], [init({ voice_settings: "loud" })], [init(), { text: 42 }], [init(), { text: "x", flush: "yes" }]];
    for (const frames of cases) {
      const rec = await run("model_id=flite", xi(server.key), frames);
      expect(rec.close).toEqual({ code: 1008, reason: "invalid_input_message" });
      expect(rec.events.at(-1)).toEqual({ message: expect.any(String), error: "invalid_input_message", code: 1008 });
    }
  });

  test("a text over 2000 characters closes 1009, in the init frame or later, as on /v1/tts", async () => {
    for (const frames of [[init(), { text: "a".repeat(2001) }], [{ text: "a".repeat(2001) }]]) {
      const rec = await run("model_id=flite", xi(server.key), frames);
      expect(rec.close.code).toBe(1009);
      expect(rec.events.at(-1)).toMatchObject({ error: "tts_text_frame_too_large", code: 1009 });
    }
  });

  test("a provider that fails after audio went out: error frame upstream_error, close 1011", async () => {
    const rec = await run("model_id=late-dying/echo&output_format=pcm_16000", xi(server.key), [init(), { text: "Doomed. ", flush: true }]);
    expect(rec.close.code).toBe(1011);
    expect(audioOf(rec).byteLength).toBeGreaterThan(0);
    expect(rec.events.at(-1)).toEqual({ message: "upstream returned 500", error: "upstream_error", code: 1011 });
  });

  test("inactivity_timeout: the socket closes 1008 after that much client silence", async () => {
    const { key, tenantId } = await fundedAccount(server);
    const c = connect(url("slt", "model_id=fixed/echo&output_format=pcm_16000&inactivity_timeout=1"), xi(key));
    c.send(init());
    c.send({ text: "Spoken, then silence. ", flush: true });
    const started = performance.now();
    const rec = await c.closed;
    expect(performance.now() - started).toBeGreaterThan(900);
    expect(rec.close.code).toBe(1008);
    expect(rec.close.reason).toContain("within the timeout of 1 seconds");
    expect(audioOf(rec).byteLength).toBeGreaterThan(0);
    // The flushed text was spoken and is paid for; the session did not complete.
    expect(await lastActivity(server, tenantId)).toMatchObject({ surface: "el", usageAmount: 22, status: "failed" });
  });
});

describe("stream-input frames", () => {
  test("the init frame: its customary space is not spoken, but a flush it asks for counts; both key spellings and Bearer", async () => {
    const { parseInitFrame } = await import("../src/surfaces/el/stream-input-frames.ts");
    expect(parseInitFrame({ text: " " }).commands).toEqual([]);
    expect(parseInitFrame({ text: " ", flush: true }).commands).toEqual([{ type: "flush" }]);
    expect(parseInitFrame({ text: "Hello ", flush: true }).commands).toEqual([{ type: "text", text: "Hello " }, { type: "flush" }]);
    expect(parseInitFrame({ text: " ", xi_api_key: "k1" }).key).toBe("k1");
    expect(parseInitFrame({ text: " ", "xi-api-key": "k2" }).key).toBe("k2");
    expect(parseInitFrame({ text: " ", authorization: "Bearer k3" }).key).toBe("k3");
  });
});
