import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { pcmOfWav, wavHeader } from "../src/audio/wav.ts";
import type { SphinxDecoder } from "../src/providers/local-pocketsphinx/decoder.ts";
import { DecoderPool } from "../src/providers/local-pocketsphinx/decoder-pool.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { concat, silence, speak } from "./helpers/speech.ts";
import { bearer } from "./helpers/ws-client.ts";

// The local recognizer reuses its decoders session after session. PocketSphinx adapts its
// estimates (live cepstral mean, noise) to what it hears, so a reused decoder must be reset, or
// the same audio gives different transcripts depending on what the decoder heard before.

const FIXTURE_TEXT = "thank you very much for your help";
const wavBytes = new Uint8Array(await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer());
const fixture = new Int16Array(pcmOfWav(wavBytes).slice().buffer);

/** Other audio a decoder may hear in between: noise, other levels and voices, several utterances. */
function otherAudio(): Int16Array[][] {
  let seed = 7;
  const noise = new Int16Array(16000).map(() => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % 6000) - 3000);
  const loud = speak("A cup of coffee.").map((s) => Math.max(-32768, Math.min(32767, s * 3)));
  const quiet = speak("Call me back.").map((s) => s >> 3);
  return [[noise], [loud], [quiet, concat([silence(300), speak("Good morning.")])]];
}

/** One session on a pooled decoder: each piece an utterance, fed in chunks of `chunk` samples. */
async function session(pool: DecoderPool, utterances: Int16Array[], chunk: number): Promise<string[]> {
  const decoder: SphinxDecoder = await pool.acquire();
  const texts: string[] = [];
  try {
    for (const pcm of utterances) {
      decoder.start();
      for (let i = 0; i < pcm.length; i += chunk) decoder.process(pcm.slice(i, i + chunk));
      texts.push(decoder.end());
    }
  } finally {
    pool.release(decoder);
  }
  return texts;
}

/** A seeded shuffle, so a failing order can be replayed. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    seed = (seed * 16807) % 2147483647;
    const j = seed % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

describe.skipIf(!localSttAvailable)("reused PocketSphinx decoders", () => {
  test("one file decoded many times, in different orders and between other audio, gives one transcript", async () => {
    const pool = new DecoderPool(2, process.env.POCKETSPHINX_MODEL_DIR);
    const jobs = [...Array.from({ length: 4 }, () => "fixture" as const), ...otherAudio()];
    const transcripts: string[] = [];
    for (const seed of [1, 2, 3]) {
      // Two sessions at a time, so the file lands on either decoder after any history.
      const order = shuffled(jobs, seed);
      for (let i = 0; i < order.length; i += 2) {
        const pair = order.slice(i, i + 2).map((job, k) => session(pool, job === "fixture" ? [fixture] : job, 160 + 97 * ((i + k) % 5)));
        const results = await Promise.all(pair);
        for (const [k, job] of order.slice(i, i + 2).entries()) if (job === "fixture") transcripts.push(results[k][0]);
      }
    }
    expect(transcripts.length).toBe(12);
    expect(new Set(transcripts)).toEqual(new Set([FIXTURE_TEXT]));
  }, 120_000);

  test("a pool never builds more than its size: the next session waits and gets a returned decoder", async () => {
    const pool = new DecoderPool(1, process.env.POCKETSPHINX_MODEL_DIR);
    const first = await pool.acquire();
    let second: SphinxDecoder | undefined;
    const waiting = pool.acquire().then((d) => (second = d));
    await Bun.sleep(50);
    expect(second).toBeUndefined();
    pool.release(first);
    await waiting;
    expect(second).toBe(first);
  });
});

describe.skipIf(!localSttAvailable)("the same file, transcribed again and again through the server", () => {
  let server: TestServer;
  // One worker with one decoder: every request reuses the same decoder.
  beforeAll(async () => {
    server = await startTestServer({ AUDIO_WORKERS: "1", LOCAL_STT_DECODERS_PER_WORKER: "1" });
  });
  afterAll(() => server.stop(0));

  const transcribe = async (wav: Uint8Array) => {
    const res = await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx-en-us`, { method: "POST", headers: { ...bearer(server.key), "content-type": "audio/wav" }, body: wav });
    expect(res.status).toBe(200);
    return ((await res.json()) as { text: string }).text;
  };
  const asWav = (pcm: Int16Array) => {
    const bytes = new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    return concatBytes(wavHeader(16000, 1, bytes.byteLength), bytes);
  };

  test("eight requests for one file, between requests for other audio, all get the same text", async () => {
    const others = otherAudio().map((pieces) => asWav(concat(pieces.flatMap((p) => [p, silence(700)]))));
    const texts: string[] = [];
    // Noise first: a fresh decoder's first utterance used to set its whole cepstral mean.
    for (let i = 0; i < 8; i++) {
      await transcribe(others[i % others.length]);
      texts.push(await transcribe(wavBytes));
    }
    expect(new Set(texts)).toEqual(new Set([FIXTURE_TEXT]));
  }, 120_000);
});

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}
