import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { picoMissing } from "./helpers/pico.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

// Every embedded engine's audio, on every surface and PCM-family format, is samples only: no WAV
// header (Flite writes one per utterance) at the start or where sentences join, which would be
// heard as a click. Outputs are decoded by ffmpeg, not by our own code.

const SENTENCES = ["The first sentence is here.", "So the second one follows it.", "Then the third one ends the text."];
const TEXT = SENTENCES.join(" ");

interface Engine {
  name: string;
  model: string;
  voice: string;
  /** Why this engine cannot be tested here (its cases are then skipped, saying so), if it cannot. */
  missing?: string;
}

const ENGINES: Engine[] = [
  { name: "Flite slt (16 kHz)", model: "flite", voice: "slt" },
  { name: "Flite kal (8 kHz)", model: "flite", voice: "kal" },
  { name: "SVOX Pico en-US", model: "pico", voice: "en-US", missing: picoMissing() },
  // eSpeak NG is enabled by the test config.
  { name: "eSpeak NG en-us (22.05 kHz)", model: "espeak-ng", voice: "en-us" },
];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

/** Native `/v1/tts` PCM of `text`: the audio and the engine's rate from `service.tts_audio_started`. */
async function nativePcm(engine: Engine, text: string) {
  const c = connect(server.wsUrl(`/v1/tts?model=${engine.model}&voice=${engine.voice}&format=pcm`), bearer(server.key));
  c.send({ type: "text", text });
  c.send({ type: "close" });
  const rec = await c.closed;
  expect(rec.close.code).toBe(1000);
  const started = rec.events.find((e) => e.type === "service.tts_audio_started")!;
  return { bytes: Buffer.concat(rec.audio), rate: started.sample_rate as number };
}

async function post(path: string, headers: Record<string, string>, body: unknown): Promise<Uint8Array> {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

async function run(args: string[], input?: Uint8Array): Promise<Uint8Array> {
  const proc = Bun.spawn(args, { stdin: input ?? "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${args[0]} failed: ${err}`);
  return new Uint8Array(out);
}

/** ffmpeg's reading of raw audio (`s16le`, `mulaw`, `alaw`) or of a file (`wav`), as 16-bit samples. */
async function decode(bytes: Uint8Array, format: "s16le" | "mulaw" | "alaw" | "wav", rate: number): Promise<Int16Array> {
  const input = format === "wav" ? ["-f", "wav"] : ["-f", format, "-ar", String(rate), "-ac", "1"];
  const out = await run(["ffmpeg", "-hide_banner", "-loglevel", "error", ...input, "-i", "pipe:0", "-f", "s16le", "-acodec", "pcm_s16le", "pipe:1"], bytes);
  return new Int16Array(out.buffer, out.byteOffset, out.byteLength >> 1);
}

/** Where the four-byte tags of a RIFF/WAVE header occur in the bytes. */
function headerTags(bytes: Uint8Array): { tag: string; at: number }[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  const found: { tag: string; at: number }[] = [];
  for (const tag of ["RIFF", "WAVE", "fmt ", "data"]) {
    for (let at = text.indexOf(tag); at >= 0; at = text.indexOf(tag, at + 1)) found.push({ tag, at });
  }
  return found;
}

/**
 * The loudest sample near each sentence start (`starts` in seconds): from 2 ms before to 8 ms after,
 * which covers a resampler's delay. The sentences start and end with consonants, so every engine
 * opens and closes them with near-silence (under 2000 measured); a header read as samples (18770
 * for "RI", 16000 for the rate) is a click of 20000 and more there, at any rate or companding.
 */
function loudestAtJoins(samples: Int16Array, rate: number, starts: number[]): number[] {
  const before = Math.round(rate * 0.002);
  const after = Math.round(rate * 0.008);
  return starts.map((t) => {
    const at = Math.round(t * rate);
    let max = 0;
    for (let i = Math.max(0, at - before); i < Math.min(samples.length, at + after); i++) max = Math.max(max, Math.abs(samples[i]));
    return max;
  });
}

/** Far above what the engines put at a sentence's edges, far below a header's values. */
const CLICK = 8000;

for (const engine of ENGINES) {
  describe.skipIf(engine.missing !== undefined)(`${engine.name}: samples only, no click where sentences join${engine.missing ? ` (skipped: ${engine.missing})` : ""}`, () => {
    /** Seconds at which each sentence starts in the spoken text, from each sentence spoken alone. */
    let starts: number[];
    let seconds: number;
    let native: { bytes: Uint8Array; rate: number };

    beforeAll(async () => {
      native = await nativePcm(engine, TEXT);
      const alone = await Promise.all(SENTENCES.map((s) => nativePcm(engine, s)));
      starts = [0];
      for (const a of alone.slice(0, -1)) starts.push(starts.at(-1)! + a.bytes.byteLength / 2 / a.rate);
      seconds = native.bytes.byteLength / 2 / native.rate;
    });

    /** Samples at `rate` with no header tag, no click at any sentence start, and the native output's duration. */
    function expectClean(samples: Int16Array, rate: number, raw?: Uint8Array) {
      if (raw) expect(headerTags(raw)).toEqual([]);
      for (const loudest of loudestAtJoins(samples, rate, starts)) expect(loudest).toBeLessThan(CLICK);
      expect(Math.abs(samples.length / rate - seconds)).toBeLessThan(0.05);
    }

    test("native /v1/tts PCM", async () => {
      expectClean(await decode(native.bytes, "s16le", native.rate), native.rate, native.bytes);
    });

    for (const [format, rate, codec] of [
      ["pcm_16000", 16000, "s16le"],
      ["pcm_24000", 24000, "s16le"],
      ["pcm_8000", 8000, "s16le"],
      ["ulaw_8000", 8000, "mulaw"],
      ["alaw_8000", 8000, "alaw"],
    ] as const) {
      test(`/el output_format=${format}`, async () => {
        const bytes = await post(`/el/v1/text-to-speech/${engine.voice}?output_format=${format}`, { "xi-api-key": server.key }, { text: TEXT, model_id: engine.model });
        expectClean(await decode(bytes, codec, rate), rate, codec === "s16le" ? bytes : undefined);
      });
    }

    test("/el stream-input output_format=pcm_24000", async () => {
      const c = connect(server.wsUrl(`/el/v1/text-to-speech/${engine.voice}/stream-input?model_id=${engine.model}&output_format=pcm_24000`), { "xi-api-key": server.key });
      c.send({ text: " " });
      c.send({ text: TEXT });
      c.send({ text: "" });
      const rec = await c.closed;
      const bytes = Buffer.concat(rec.events.filter((e) => typeof e.audio === "string").map((e) => Buffer.from(e.audio, "base64")));
      expectClean(await decode(bytes, "s16le", 24000), 24000, bytes);
    });

    test("/oai response_format=pcm (24 kHz)", async () => {
      const bytes = await post("/oai/audio/speech", bearer(server.key), { model: engine.model, voice: engine.voice, input: TEXT, response_format: "pcm" });
      expectClean(await decode(bytes, "s16le", 24000), 24000, bytes);
    });

    test("/oai response_format=wav: one header, then samples; ffprobe's duration matches the sample count", async () => {
      const bytes = await post("/oai/audio/speech", bearer(server.key), { model: engine.model, voice: engine.voice, input: TEXT, response_format: "wav" });
      expect(headerTags(bytes)).toEqual([
        { tag: "RIFF", at: 0 },
        { tag: "WAVE", at: 8 },
        { tag: "fmt ", at: 12 },
        { tag: "data", at: 36 },
      ]);
      const samples = await decode(bytes, "wav", 24000);
      expect(samples.length).toBe((bytes.byteLength - 44) / 2);
      expectClean(samples, 24000);
      const file = join(tempDir("voxroute-wav-"), "speech.wav");
      await Bun.write(file, bytes);
      const probe = JSON.parse(new TextDecoder().decode(await run(["ffprobe", "-v", "error", "-show_streams", "-show_format", "-of", "json", file])));
      expect(probe.streams.length).toBe(1);
      expect(probe.streams[0]).toMatchObject({ codec_name: "pcm_s16le", sample_rate: "24000", channels: 1 });
      expect(Number(probe.format.duration)).toBeCloseTo(samples.length / 24000, 3);
    });
  });
}
