import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PcmDecoder } from "../src/audio/decode.ts";
import { probeDuration } from "../src/audio/probe.ts";
import type { TranscriptionRequest } from "../src/providers/stt-types.ts";
import { spareCatalogue, SpareStt } from "./fakes/spare-stt.ts";
import { lacedOpusWebm } from "./helpers/forged-audio.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { tempDir } from "./helpers/temp-dirs.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer, connect } from "./helpers/ws-client.ts";

// Measuring an uploaded file's duration, and decoding it for the embedded recognizer, are CPU work
// of up to seconds: done on the server's event loop, they stall every other session meanwhile. A
// timer on the loop (the server runs in this process) must keep firing while a long file is
// measured and decoded. Gaps are compared with how long the same work takes on the loop itself,
// not with a fixed time, so a loaded machine slows both sides alike. `bun run test` runs this file
// in a process of its own: the heap other files leave behind would make its collections count.

/** Keeps the files it is sent, to check they reach the provider whole. */
class RecordingSpare extends SpareStt {
  readonly received: Uint8Array[] = [];
  override async transcribe(req?: TranscriptionRequest) {
    this.received.push(req!.bytes.slice());
    return super.transcribe();
  }
}

const spare = new RecordingSpare();
let server: TestServer;
beforeAll(async () => {
  // One audio worker with one decoder, which a streaming session holds in the decode test.
  server = await startTestServer(
    { AUDIO_WORKERS: "1", LOCAL_STT_DECODERS_PER_WORKER: "1", LOCAL_STT_QUEUE: "1", LOCAL_STT_QUEUE_WAIT_MS: "300" },
    { extra: { catalogue: spareCatalogue(), providers: [], sttProviders: [spare] } },
  );
});
afterAll(() => server.stop(0));

/** How long the work takes on this thread: the best of two runs, so a warm JIT does not flatter the fix. */
async function onTheLoop(work: () => unknown): Promise<number> {
  let best = Infinity;
  for (let i = 0; i < 2; i++) {
    const t0 = performance.now();
    await work();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/** The longest the event loop went without running a 5 ms timer while `work` ran. */
async function longestStall<T>(work: () => Promise<T>): Promise<{ result: T; stallMs: number }> {
  // A full collection owed by the tests before this one (the suite runs in one process) is not
  // the server's doing: it is taken before the clock starts.
  Bun.gc(true);
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 5);
  try {
    return { result: await work(), stallMs };
  } finally {
    clearInterval(timer);
  }
}

const post = (query: string, type: string, body: Uint8Array) =>
  fetch(`${server.url}/v1/stt/transcriptions?${query}`, { method: "POST", headers: { ...bearer(server.key), "content-type": type }, body });

/**
 * The smaller of two runs' longest stalls, the same request sent twice (answered with one status): a
 * thread preempted by the machine's other work is no stall of the server's, and is unlikely to
 * fall twice; work done on the loop stalls it in both runs.
 */
async function leastStall(work: () => Promise<Response>): Promise<{ result: Response; stallMs: number }> {
  const first = await longestStall(work);
  const second = await longestStall(work);
  expect(second.result.status).toBe(first.result.status);
  return { result: second.result, stallMs: Math.min(first.stallMs, second.stallMs) };
}

/**
 * The same request sent by curl from another process: the upload's buffering and copying on the
 * client side then cost this event loop nothing, so the gaps measured are the server's alone.
 * The file is written before the clock starts.
 */
function postFromOutside(query: string, type: string, body: Uint8Array): () => Promise<Response> {
  const dir = tempDir("upload-");
  const file = join(dir, "body");
  writeFileSync(file, body);
  return async () => {
    const curl = Bun.spawn(
      [
        "curl",
        "-s",
        "-o",
        join(dir, "answer"),
        "-w",
        "%{http_code}",
        "-H",
        `authorization: Bearer ${server.key}`,
        "-H",
        `content-type: ${type}`,
        "--data-binary",
        `@${file}`,
        `${server.url}/v1/stt/transcriptions?${query}`,
      ],
      { stdout: "pipe" },
    );
    const status = Number(await new Response(curl.stdout).text());
    return new Response(await Bun.file(join(dir, "answer")).text(), { status });
  };
}

describe("file transcription keeps the event loop free", () => {
  test("measuring a long file's duration: the loop's timers keep firing, and the provider gets the file whole", async () => {
    // An hour of Opus, one 20 ms frame per cluster: each of its 180,000 blocks is read to measure it.
    const webm = lacedOpusWebm(180_000, 1, "xiph");
    const expected = probeDuration(webm);
    expect(expected.seconds).toBe(3600);
    const measureMs = await onTheLoop(() => probeDuration(webm));

    const { result: res, stallMs } = await leastStall(postFromOutside("model=pocketsphinx-en-us&provider=spare", "audio/webm", webm));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ duration_seconds: expected.seconds, billed_seconds: 3600, provider: "spare" });
    expect(spare.received.at(-1)).toEqual(webm);
    expect({ stallMs, measureMs, stalledLessThanAQuarter: stallMs < measureMs / 4 }).toMatchObject({ stalledLessThanAQuarter: true });
  }, 60_000);

  test("a forged 25 MiB upload is refused as before (422 indeterminate_audio_duration) without stalling the loop", async () => {
    // About 6 million 20 ms frames, 256 to a block: over a day of audio, which is refused only once every one is counted.
    const forged = lacedOpusWebm(23_000, 256, "fixed");
    expect(forged.length).toBeGreaterThan(20 * 1024 * 1024);
    const refuse = () => {
      try {
        probeDuration(forged);
      } catch (err) {
        return err as Error;
      }
    };
    const refusal = refuse();
    expect(refusal).toMatchObject({ code: "indeterminate_audio_duration" });
    const measureMs = await onTheLoop(refuse);

    const { result: res, stallMs } = await leastStall(postFromOutside("model=pocketsphinx-en-us&provider=spare", "audio/webm", forged));
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ error: "indeterminate_audio_duration", message: refusal!.message, request_id: expect.any(String) });
    expect({ stallMs, measureMs, stalledLessThanAQuarter: stallMs < measureMs / 4 }).toMatchObject({ stalledLessThanAQuarter: true });
  }, 60_000);

  test.skipIf(!localSttAvailable)(
    "decoding a 20-minute MP3 for the embedded recognizer: the loop's timers keep firing",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "voxroute-long-"));
      const made = Bun.spawn(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000:duration=1200", "-ac", "1", "-b:a", "64k", join(dir, "long.mp3")]);
      expect(await made.exited).toBe(0);
      const mp3 = new Uint8Array(await Bun.file(join(dir, "long.mp3")).arrayBuffer());
      rmSync(dir, { recursive: true });
      const decodeMs = await onTheLoop(async () => {
        const decoder = await PcmDecoder.open(mp3, "MPEG", 16000);
        while (decoder.read(16000 * 60).length);
        decoder.free();
      });

      // A streaming session holds the only decoder: the file's first batch is decoded, then it
      // waits for one in vain and goes to the spare provider, so the test does not wait for 20
      // minutes to be recognized.
      const holder = connect(server.wsUrl("/v1/stt?model=pocketsphinx-en-us&audio_format=pcm_16000&allow_fallbacks=false"), bearer(server.key));
      await holder.opened;
      while (!holder.rec.events.some((e) => e.type === "stt.session.started")) await Bun.sleep(10);
      try {
        const { result: res, stallMs } = await leastStall(postFromOutside("model=pocketsphinx-en-us", "audio/mpeg", mp3));
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ duration_seconds: probeDuration(mp3).seconds, provider: "spare" });
        expect(spare.received.at(-1)).toEqual(mp3);
        expect({ stallMs, decodeMs, stalledLessThanAQuarter: stallMs < decodeMs / 4 }).toMatchObject({ stalledLessThanAQuarter: true });
      } finally {
        holder.ws.close();
      }
    },
    120_000,
  );
});

describe("file workers", () => {
  test("a worker that dies while measuring fails only that request (500), and its replacement measures the next", async () => {
    const forged = lacedOpusWebm(23_000, 256, "fixed"); // seconds of measuring
    const pending = post("model=pocketsphinx-en-us&provider=spare", "audio/webm", forged);
    await Bun.sleep(300);
    const [worker] = server.ctx.files.workers;
    await worker!.terminate();
    const res = await pending;
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ error: "internal_error" });
    const deadline = performance.now() + 10_000;
    while (server.ctx.files.workers[0] === worker && performance.now() < deadline) await Bun.sleep(20);
    const wav = new Uint8Array(await Bun.file(new URL("./fixtures/speech.wav", import.meta.url)).arrayBuffer());
    const next = await post("model=pocketsphinx-en-us&provider=spare", "audio/wav", wav);
    expect(next.status).toBe(200);
    expect(await next.json()).toMatchObject({ duration_seconds: 2.745, provider: "spare" });
  }, 60_000);
});
