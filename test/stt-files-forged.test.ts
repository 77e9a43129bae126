import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FAKE_OPENAI_KEY, startFakeOpenAi, type FakeOpenAi } from "./fakes/openai.ts";
import { digestOf } from "./fakes/received-audio.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import {
  chunk,
  decodedSeconds,
  flacWithTotalSamples,
  fmtWith,
  mp3WithXingFrames,
  mp4WithDurations,
  oggWithGranules,
  riff,
  speech,
  wavParts,
  webmWithDuration,
  withJunk,
} from "./helpers/forged-audio.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer } from "./helpers/ws-client.ts";

// Files whose headers claim less audio than they hold, sent to every file surface: the bill is
// never below what ffmpeg decodes (from the true file, or from the forged one as a provider would),
// or the file is refused with 422 indeterminate_audio_duration in the surface's envelope. A file
// that is served reaches the provider as uploaded, forged header and all.

const TIMES = 2; // the fixture's sentence twice: 5.5 s of speech

interface Forged {
  name: string;
  bytes: Uint8Array;
  /** Seconds ffmpeg decodes from the file before it was forged. */
  truth: number;
  /** A header that disagrees with its own format: refused rather than recomputed. */
  refused?: boolean;
}

const le32 = (n: number) => new Uint8Array(new Uint32Array([n]).buffer);
const forged: Forged[] = [];

beforeAll(async () => {
  const [wav, mp3, m4a, webm, opus, vorbis, flac] = await Promise.all([
    speech(TIMES, "speech.wav", ["-c", "copy"]),
    speech(TIMES, "speech.mp3", ["-c:a", "libmp3lame", "-q:a", "6"]), // VBR: a Xing header counts its frames
    speech(TIMES, "speech.m4a", ["-c:a", "aac", "-b:a", "32k"]),
    speech(TIMES, "speech.webm", ["-c:a", "libopus", "-b:a", "24k"]),
    speech(TIMES, "speech.opus.ogg", ["-c:a", "libopus"]),
    speech(TIMES, "speech.vorbis.ogg", ["-c:a", "libvorbis"]),
    speech(TIMES, "speech.flac", ["-c:a", "flac"]),
  ]);
  const truth = async (bytes: Uint8Array, name: string) => decodedSeconds(bytes, name);
  const t = {
    wav: await truth(wav, "t.wav"),
    mp3: await truth(mp3, "t.mp3"),
    m4a: await truth(m4a, "t.m4a"),
    webm: await truth(webm, "t.webm"),
    opus: await truth(opus, "t.ogg"),
    vorbis: await truth(vorbis, "t.ogg"),
    flac: await truth(flac, "t.flac"),
  };
  const { fmt, pcm } = wavParts(wav);
  const alignFor1ms = pcm.length / 16; // bytes a forged block alignment would make "16 samples", 1 ms at 16 kHz
  const half = pcm.length / 2;
  forged.push(
    { name: "WAV with a fact chunk claiming 1 ms", bytes: riff(chunk("fmt ", fmt), chunk("fact", le32(16)), chunk("data", pcm)), truth: t.wav },
    { name: "WAV whose nBlockAlign makes its data 1 ms", bytes: riff(chunk("fmt ", fmtWith(fmt, 12, alignFor1ms)), chunk("data", pcm)), truth: t.wav, refused: true },
    { name: "WAV whose byte rate makes its data 1 ms", bytes: riff(chunk("fmt ", fmtWith(fmt, 8, pcm.length * 1000)), chunk("data", pcm)), truth: t.wav, refused: true },
    { name: "WAV whose data size is 32 bytes of its data", bytes: riff(chunk("fmt ", fmt), chunk("data", pcm, 32)), truth: t.wav },
    { name: "WAV whose data size runs past the file", bytes: riff(chunk("fmt ", fmt), chunk("data", pcm, 0x7fffffff)), truth: t.wav },
    { name: "WAV whose data size is 0, as streamed WAV writes it", bytes: riff(chunk("fmt ", fmt), chunk("data", pcm, 0)), truth: t.wav },
    { name: "WAV with its audio in two data chunks", bytes: riff(chunk("fmt ", fmt), chunk("data", pcm.subarray(0, half)), chunk("data", pcm.subarray(half))), truth: t.wav },
    { name: "MP3 whose Xing header counts 1 frame", bytes: mp3WithXingFrames(mp3, 1), truth: t.mp3 },
    { name: "M4A whose mvhd, tkhd, mdhd, elst and stts durations are 1 tick", bytes: mp4WithDurations(m4a), truth: t.m4a },
    { name: "M4A whose mdhd timescale is 1000 times its rate", bytes: mp4WithDurations(m4a, { timescale: 1000 }), truth: t.m4a },
    { name: "WebM whose Duration is 1 ms", bytes: webmWithDuration(webm, 1), truth: t.webm },
    { name: "WebM whose Duration is 1 ms, with junk after its last cluster", bytes: withJunk(webmWithDuration(webm, 1)), truth: t.webm },
    { name: "Ogg Opus whose granule positions are 1 sample", bytes: oggWithGranules(opus, 1), truth: t.opus },
    { name: "Ogg Vorbis whose granule positions are 1 sample", bytes: oggWithGranules(vorbis, 1), truth: t.vorbis },
    { name: "FLAC whose STREAMINFO counts 16 samples", bytes: flacWithTotalSamples(flac, 16), truth: t.flac },
  );
  for (const f of forged) {
    // What a provider given the forged file would decode counts too.
    f.truth = Math.max(f.truth, await decodedSeconds(f.bytes, `forged-${forged.indexOf(f)}`).catch(() => 0));
    expect(f.truth).toBeGreaterThan(5);
  }
}, 60_000);

type Surface = (server: TestServer, key: string, bytes: Uint8Array) => Promise<{ status: number; code?: string }>;

const form = (fields: Record<string, string>, bytes: Uint8Array) => {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.set(k, v);
  body.set("file", new Blob([bytes]), "audio");
  return body;
};

const SURFACES: Record<string, Surface> = {
  "POST /v1/stt/transcriptions": async (server, key, bytes) => {
    const res = await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: bearer(key), body: form({ model: "whisper-1" }, bytes) });
    return { status: res.status, code: ((await res.json()) as any).error };
  },
  "POST /oai/audio/transcriptions": async (server, key, bytes) => {
    const res = await fetch(`${server.url}/oai/audio/transcriptions`, { method: "POST", headers: bearer(key), body: form({ model: "whisper-1" }, bytes) });
    return { status: res.status, code: ((await res.json()) as any).error?.code };
  },
  "POST /el/v1/speech-to-text": async (server, key, bytes) => {
    const res = await fetch(`${server.url}/el/v1/speech-to-text`, { method: "POST", headers: { "xi-api-key": key }, body: form({ model_id: "openai/whisper-1" }, bytes) });
    return { status: res.status, code: ((await res.json()) as any).detail?.status };
  },
};

describe("forged headers through a cloud provider (the OpenAI fake) on every file surface", () => {
  let fake: FakeOpenAi;
  let server: TestServer;
  beforeAll(async () => {
    fake = startFakeOpenAi();
    server = await startTestServer({ OPENAI_API_KEY: FAKE_OPENAI_KEY, OPENAI_BASE_URL: fake.url });
  });
  afterAll(async () => {
    await server.stop(0);
    fake.stop();
  });

  for (const [surface, send] of Object.entries(SURFACES)) {
    test(`${surface}: billed at least the decoded audio, or 422 indeterminate_audio_duration; the provider gets the file as uploaded`, async () => {
      expect(forged.length).toBeGreaterThan(0);
      for (const f of forged) {
        const { key, tenantId } = await fundedAccount(server);
        const answer = await send(server, key, f.bytes);
        if (f.refused) {
          expect({ file: f.name, ...answer }).toEqual({ file: f.name, status: 422, code: "indeterminate_audio_duration" });
          continue;
        }
        expect({ file: f.name, status: answer.status }).toEqual({ file: f.name, status: 200 });
        expect({ file: f.name, received: fake.transcriptions.at(-1)!.file }).toEqual({ file: f.name, received: digestOf([f.bytes]) });
        const record = await lastActivity(server, tenantId);
        expect({ file: f.name, status: record.status }).toEqual({ file: f.name, status: "completed" });
        expect({ file: f.name, billed: record.usageAmount >= f.truth }).toEqual({ file: f.name, billed: true });
      }
    }, 30_000);
  }
});

describe.skipIf(!localSttAvailable)("forged headers through the embedded recognizer", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop(0));

  test("the recognizer hears every second it is billed for, and is billed for every second it hears", async () => {
    // The files whose headers would cut what the recognizer hears or what it is billed.
    const files = forged.filter((f) => /32 bytes|size is 0|two data chunks|Xing/.test(f.name));
    await Promise.all(
      files.map(async (f) => {
        const { key, tenantId } = await fundedAccount(server);
        const res = await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: bearer(key), body: form({ model: "pocketsphinx-en-us" }, f.bytes) });
        const body = (await res.json()) as any;
        expect({ file: f.name, status: res.status }).toEqual({ file: f.name, status: 200 });
        const record = await lastActivity(server, tenantId);
        expect({ file: f.name, billed: record.usageAmount >= f.truth }).toEqual({ file: f.name, billed: true });
        // The last words are heard (audio past a lying data size is not dropped), within what was billed.
        const end = body.segments.at(-1).end_ms / 1000;
        expect({ file: f.name, heardToTheEnd: end > f.truth - 2.5 && end <= record.usageAmount }).toEqual({ file: f.name, heardToTheEnd: true });
      }),
    );
  }, 120_000);
});
