import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { EnginePool } from "../src/pools/engine-pool.ts";
import { LocalEngineProvider } from "../src/providers/local-engine-provider.ts";
import { ProviderError } from "../src/errors.ts";
import type { TtsStream } from "../src/providers/types.ts";
import { takeSentences, UtteranceCutter } from "../src/providers/sentences.ts";
import { PICO_DIR } from "./helpers/server.ts";
import { peak } from "./helpers/ws-client.ts";
import { tempDir } from "./helpers/temp-dirs.ts";

const pool = new EnginePool(2, { picoVoicesDir: PICO_DIR, picoVoicesUrl: "" });
afterAll(() => pool.close());

const SENTENCE = "The quick brown fox jumps over the lazy dog.";

async function collect(stream: TtsStream) {
  const audio: Uint8Array[] = [];
  let flushes = 0;
  for await (const ev of stream) {
    if (ev.type === "audio") audio.push(ev.audio);
    else flushes++;
  }
  return { audio, flushes, bytes: audio.reduce((n, a) => n + a.byteLength, 0) };
}

async function speak(provider: LocalEngineProvider, voice: string | undefined, text = SENTENCE) {
  const stream = await provider.open({ model: "m", voice, format: "pcm", options: {} });
  stream.write(text);
  stream.end();
  return { rate: stream.audioFormat.sampleRate, ...(await collect(stream)) };
}

// A sentence of nine words takes roughly 2–4 s to say; anything far outside means broken audio.
const engines: [string, "flite" | "svox-pico" | "espeak-ng", string | undefined, number][] = [
  ["Flite slt", "flite", "slt", 16000],
  ["Flite default voice (kal, 8 kHz)", "flite", undefined, 8000],
  ["SVOX Pico en-US", "svox-pico", "en-US", 16000],
  ["SVOX Pico de-DE", "svox-pico", "de-DE", 16000],
  ["eSpeak NG en-us", "espeak-ng", "en-us", 22050],
  ["eSpeak NG by identifier", "espeak-ng", "roa/fr", 22050],
];

describe("embedded engines produce speech", () => {
  for (const [name, engine, voice, rate] of engines) {
    test(`${name}: non-silent PCM of plausible duration at ${rate} Hz`, async () => {
      const out = await speak(new LocalEngineProvider(engine, engine, pool), voice);
      expect(out.rate).toBe(rate);
      expect(out.bytes % 2).toBe(0);
      const seconds = out.bytes / 2 / rate;
      expect(seconds).toBeGreaterThan(1.5);
      expect(seconds).toBeLessThan(6);
      expect(peak(out.audio)).toBeGreaterThan(3000);
    });
  }

  test("long text is streamed utterance by utterance, each flush acknowledged after its audio", async () => {
    const provider = new LocalEngineProvider("flite", "flite", pool);
    const stream = await provider.open({ model: "flite", voice: "slt", format: "pcm", options: {} });
    stream.write("One. Two is here! Three? ");
    stream.flush();
    stream.write("Four without a stop");
    stream.end();
    const events: string[] = [];
    for await (const ev of stream) events.push(ev.type);
    // three utterances before the flush, one after it, each marked spoken after its audio
    expect(events.filter((e) => e === "audio").length).toBeGreaterThanOrEqual(4);
    expect(events.indexOf("flushed")).toBeGreaterThan(2);
    expect(events.filter((e) => e === "spoken").length).toBe(4);
    expect(events.indexOf("spoken")).toBeGreaterThan(events.indexOf("audio"));
    expect(events.slice(-2)).toEqual(["audio", "spoken"]);
  });

  test("an unknown voice is refused as the caller's error (not retryable)", async () => {
    for (const [engine, voice] of [
      ["flite", "nobody"],
      ["svox-pico", "xx-XX"],
      ["espeak-ng", "zz-nope"],
    ] as const) {
      const err = await new LocalEngineProvider(engine, engine, pool).open({ model: "m", voice, format: "pcm", options: {} }).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect(err.retryable).toBe(false);
    }
  });

  test("a cancelled stream ends at once and the worker stays usable", async () => {
    const provider = new LocalEngineProvider("flite", "flite", pool);
    const stream = await provider.open({ model: "flite", voice: "slt", format: "pcm", options: {} });
    stream.write("A first sentence. A second sentence. A third sentence. ");
    stream.cancel();
    await collect(stream);
    const after = await speak(provider, "slt", "Still working.");
    expect(after.bytes).toBeGreaterThan(16000);
  });

  test("voices are listed with the ids the engines accept", async () => {
    const flite = await new LocalEngineProvider("flite", "flite", pool).voices();
    expect(flite.map((v) => v.id)).toContain("slt");
    const pico = await new LocalEngineProvider("svox-pico", "svox-pico", pool).voices();
    expect(pico.map((v) => v.id)).toEqual(["en-US", "en-GB", "de-DE", "es-ES", "fr-FR", "it-IT"]);
    const espeak = await new LocalEngineProvider("espeak-ng", "espeak-ng", pool).voices();
    expect(espeak.length).toBeGreaterThan(100);
    const en = espeak.find((v) => v.languages.includes("en-us"))!;
    const out = await speak(new LocalEngineProvider("espeak-ng", "espeak-ng", pool), en.id, "Listed voice.");
    expect(out.bytes).toBeGreaterThan(0);
  });
});

describe("Pico voice files", () => {
  test("a missing voice is fetched once from the configured URL, checked, and kept", async () => {
    let requests = 0;
    const origin = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch(req) {
        requests++;
        const name = new URL(req.url).pathname.split("/").pop()!;
        return new Response(readFileSync(join(PICO_DIR, name)));
      },
    });
    const dir = tempDir("pico-fetch-");
    const fetching = new EnginePool(1, { picoVoicesDir: dir, picoVoicesUrl: `http://127.0.0.1:${origin.port}/lang` });
    try {
      const provider = new LocalEngineProvider("svox-pico", "svox-pico", fetching);
      const out = await speak(provider, "en-GB", "Fetched voice.");
      expect(out.bytes).toBeGreaterThan(16000);
      expect(existsSync(join(dir, "en-GB_ta.bin")) && existsSync(join(dir, "en-GB_kh0_sg.bin"))).toBe(true);
      expect(requests).toBe(2);
      await speak(provider, "en-GB", "Again.");
      expect(requests).toBe(2);
    } finally {
      origin.stop(true);
      await fetching.close();
    }
  });

  test("a corrupted download is refused and not kept", async () => {
    const origin = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("not a voice") });
    const dir = tempDir("pico-bad-");
    const fetching = new EnginePool(1, { picoVoicesDir: dir, picoVoicesUrl: `http://127.0.0.1:${origin.port}` });
    try {
      const err = await new LocalEngineProvider("svox-pico", "svox-pico", fetching).open({ model: "pico", voice: "it-IT", format: "pcm", options: {} }).catch((e) => e);
      expect(err).toBeInstanceOf(ProviderError);
      expect(String(err.message)).toContain("SHA-256");
      expect(existsSync(join(dir, "it-IT_ta.bin"))).toBe(false);
    } finally {
      origin.stop(true);
      await fetching.close();
    }
  });
});

describe("sentence splitting", () => {
  const texts = (buffer: string) => {
    const { sentences, rest } = takeSentences(buffer);
    return { sentences: sentences.map((s) => s.text), rest };
  };

  test("complete sentences are taken, the fragment waits", () => {
    expect(texts("Hi there. How are")).toEqual({ sentences: ["Hi there."], rest: "How are" });
    expect(texts("Wait... what?! Yes. ")).toEqual({ sentences: ["Wait...", "what?!", "Yes."], rest: "" });
    expect(texts("line one\nline two")).toEqual({ sentences: ["line one"], rest: "line two" });
    expect(texts("3.14 is pi")).toEqual({ sentences: [], rest: "3.14 is pi" });
    expect(texts('He said "stop." Then')).toEqual({ sentences: ['He said "stop."'], rest: "Then" });
  });

  test("each utterance accounts for the text it stands for, white space and all, in code points", () => {
    const cutter = new UtteranceCutter();
    expect(cutter.take("  Hi 👋 there. ")).toEqual([{ text: "Hi 👋 there.", raw: "  Hi 👋 there. ", chars: 14 }]);
    expect(cutter.take("\n\n")).toEqual([]); // white space alone goes with the next utterance
    expect(cutter.take("How are")).toEqual([]);
    expect(cutter.take(" you? Fine")).toEqual([{ text: "How are you?", raw: "\n\nHow are you? ", chars: 15 }]);
    expect(cutter.rest()).toEqual({ text: "Fine", raw: "Fine", chars: 4 });
    expect(cutter.rest()).toBeUndefined();
    const long = "word ".repeat(1000);
    const cut = new UtteranceCutter();
    const utterances = [...cut.take(long), cut.rest()].filter((u) => u !== undefined);
    expect(utterances.length).toBeGreaterThan(1);
    expect(utterances.map((u) => u.raw).join("")).toBe(long.slice(0, -1)); // the last space is in no utterance
    expect(utterances.reduce((n, u) => n + u.chars, 0)).toBe(long.length - 1);
  });
});
