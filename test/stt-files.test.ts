import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { desc, eq } from "drizzle-orm";
import { createKey } from "./helpers/accounts.ts";
import { aacFrameSeconds } from "../src/audio/duration/aac.ts";
import { probeDuration } from "../src/audio/probe.ts";
import { ApiError } from "../src/errors.ts";
import { decodedSeconds, lacedOpusWebm, speech } from "./helpers/forged-audio.ts";
import { localSttAvailable } from "./helpers/local-stt.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";
import { bearer } from "./helpers/ws-client.ts";

// File transcription and duration probing on real files of each container (test/fixtures:
// "Thank you very much for your help." by Flite, 2.745 s, converted with ffmpeg).

const fixture = async (name: string) => new Uint8Array(await Bun.file(new URL(`./fixtures/${name}`, import.meta.url)).arrayBuffer());

const refusal = (bytes: Uint8Array) => {
  try {
    return probeDuration(bytes);
  } catch (err) {
    return err as ApiError;
  }
};

describe("duration probing", () => {
  // Measured from the frames and packets: at least what a decoder plays (ffprobe: 2.745 s, or 2.844
  // for the MP3 and 2.7515 for the Ogg Opus, which trim encoder delay), at most a frame or two more.
  const cases: [string, string, number][] = [
    ["speech.wav", "WAVE", 2.745],
    ["speech.mp3", "MPEG", 2.88], // 100 frames of 576 samples at 16 kHz, the Info frame among them
    ["speech.flac", "FLAC", 2.745],
    ["speech.ogg", "Ogg", 2.76], // 138 Opus packets of 20 ms
    ["speech.webm", "EBML/webm", 2.76], // the same packets in blocks (the header says 2.753)
    ["speech.m4a", "M4A/isom/iso2", 2.816], // 44 AAC frames of 1024 samples at 16 kHz
  ];
  for (const [name, container, seconds] of cases) {
    test(`${name}: ${seconds} s from its ${container} container`, async () => {
      const probe = probeDuration(await fixture(name));
      expect(probe).toEqual({ container, seconds });
    });
  }

  test("WebM: the blocks decide, so a browser recording without a header duration is measured, and a header that lies is not believed", async () => {
    const webm = await fixture("speech.webm");
    const at = webm.findIndex((b, i) => b === 0x44 && webm[i + 1] === 0x89); // the Duration element
    const size = webm[at + 2]! & 0x7f;
    const lying = webm.slice();
    new DataView(lying.buffer, at + 3, size).setFloat64(0, 1.0); // "1 ms"
    const missing = webm.slice();
    missing[at] = 0xec; // a Void element in its place, as MediaRecorder writes no duration
    missing[at + 1] = 0x80 | (size + 1);
    for (const file of [lying, missing]) expect(probeDuration(file).seconds).toBe(2.76);
  });

  test("a corrupt or empty file is 422 indeterminate_audio_duration, never a guess", async () => {
    for (const bytes of [await fixture("corrupt.mp3"), new Uint8Array(0), new TextEncoder().encode("RIFF....WAVEnot really")]) {
      const err = refusal(bytes);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ code: "indeterminate_audio_duration", status: 422 });
    }
  });

  // Containers and codecs beyond the fixtures, made by ffmpeg: each measured at least as long as
  // ffmpeg decodes it, and not a quarter second more.
  const encodings: [string, string[]][] = [
    ["24-bit stereo 44.1 kHz WAV", ["-ac", "2", "-ar", "44100", "-c:a", "pcm_s24le", "-f", "wav"]],
    ["WAVE_FORMAT_EXTENSIBLE WAV", ["-ac", "3", "-c:a", "pcm_s16le", "-f", "wav"]],
    ["MP3 in WAV", ["-c:a", "libmp3lame", "-f", "wav"]],
    ["MPEG layer II", ["-c:a", "mp2", "-f", "mp2"]],
    ["ADTS AAC", ["-c:a", "aac", "-f", "adts"]],
    ["FLAC in Ogg", ["-c:a", "flac", "-f", "ogg"]],
    ["Vorbis in Ogg", ["-c:a", "libvorbis", "-f", "ogg"]],
    ["Vorbis in WebM", ["-c:a", "libvorbis", "-f", "webm"]],
    ["WebM written live (unknown sizes)", ["-c:a", "libopus", "-f", "webm", "-live", "1"]],
    ["PCM in Matroska", ["-c:a", "pcm_s16le", "-f", "matroska"]],
    ["MP3 in Matroska", ["-c:a", "libmp3lame", "-f", "matroska"]],
    ["AAC in Matroska", ["-c:a", "aac", "-f", "matroska"]],
    ["FLAC in Matroska", ["-c:a", "flac", "-f", "matroska"]],
    ["fragmented MP4 (as Safari records)", ["-c:a", "aac", "-movflags", "frag_keyframe+empty_moov", "-frag_duration", "1000000", "-f", "mp4"]],
    ["AAC at 44.1 kHz in an iPod M4A", ["-ar", "44100", "-c:a", "aac", "-f", "ipod"]],
    ["ALAC in M4A", ["-c:a", "alac", "-f", "ipod"]],
    ["Opus in MP4", ["-c:a", "libopus", "-f", "mp4"]],
    ["Opus in fragmented MP4 (as browsers record it)", ["-c:a", "libopus", "-movflags", "frag_keyframe+empty_moov", "-frag_duration", "1000000", "-f", "mp4"]],
    ["MP3 in MP4", ["-c:a", "libmp3lame", "-f", "mp4"]],
    ["FLAC in MP4", ["-c:a", "flac", "-strict", "-2", "-f", "mp4"]],
  ];
  for (const [name, args] of encodings) {
    test(`${name}: measured from its frames`, async () => {
      const bytes = await speech(2, "audio", args);
      const decoded = await decodedSeconds(bytes, "audio");
      const { seconds } = probeDuration(bytes);
      expect(seconds).toBeGreaterThanOrEqual(decoded - 0.001); // ffmpeg's resampling to count may add a sample
      expect(seconds).toBeLessThan(decoded + 0.25);
    });
  }

  test("WebM frames laced (Xiph, EBML, fixed) or stored with a stripped header: each one counted, as ffmpeg decodes them", async () => {
    for (const lacing of ["xiph", "ebml", "fixed"] as const) {
      for (const stripped of [false, true]) {
        const webm = lacedOpusWebm(10, 5, lacing, stripped); // 50 frames of 20 ms
        const decoded = await decodedSeconds(webm, "laced.webm");
        expect({ lacing, stripped, seconds: probeDuration(webm).seconds }).toEqual({ lacing, stripped, seconds: 1 });
        expect(decoded).toBeGreaterThan(0.99); // 1 s less Opus's pre-skip
      }
    }
  });

  test("an AAC frame lasts its frame length at the core rate: 960 or 1024 samples, SBR (HE-AAC) included", () => {
    const config = (bits: string) =>
      new Uint8Array(
        bits
          .padEnd(Math.ceil(bits.length / 8) * 8, "0")
          .match(/.{8}/g)!
          .map((b) => parseInt(b, 2)),
      );
    // object type (5 bits), rate index (4), channels (4), [SBR: output rate index (4), core object type (5)], frame length flag
    expect(aacFrameSeconds(config("00010" + "0011" + "0001" + "0"))).toBe(1024 / 48000); // AAC-LC
    expect(aacFrameSeconds(config("00010" + "0011" + "0001" + "1"))).toBe(960 / 48000);
    expect(aacFrameSeconds(config("00101" + "0111" + "0001" + "0100" + "00010" + "0"))).toBe(1024 / 22050); // HE-AAC, 44.1 kHz out
  });

  test("corrupted files (bytes changed, inserted, removed, cut off): never a crash, never less than ffmpeg decodes", async () => {
    let seed = 42;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n;
    const files = [
      ...(await Promise.all(["speech.wav", "speech.mp3", "speech.flac", "speech.ogg", "speech.webm", "speech.m4a"].map(fixture))),
      await speech(1, "audio", ["-c:a", "libvorbis", "-f", "ogg"]),
      await speech(1, "audio", ["-c:a", "libopus", "-movflags", "frag_keyframe+empty_moov", "-frag_duration", "500000", "-f", "mp4"]),
    ];
    for (const file of files) {
      for (let round = 0; round < 8; round++) {
        let bytes = file.slice();
        const at = Math.floor(random(bytes.length));
        const kind = round % 4;
        if (kind === 0) for (let i = 0; i < 6; i++) bytes[Math.floor(random(random(1) < 0.5 ? 400 : bytes.length))] = random(256);
        else if (kind === 1) bytes = new Uint8Array(Buffer.concat([bytes.subarray(0, at), new Uint8Array(1 + random(300)).map(() => random(256)), bytes.subarray(at)]));
        else if (kind === 2) bytes = new Uint8Array(Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + 1 + random(300))]));
        else bytes = bytes.slice(0, at);
        const probe = refusal(bytes);
        if (probe instanceof ApiError) {
          expect(probe.code).toBe("indeterminate_audio_duration");
          continue;
        }
        const decoded = await decodedSeconds(bytes, "corrupted").catch(() => 0);
        expect(probe.seconds).toBeGreaterThanOrEqual(decoded - 0.001);
      }
    }
  }, 120_000);

  test("a length that is wrong hides no audio after it: an Ogg page's, a Matroska element's or its Segment's", async () => {
    // FLAC in Ogg: 60 bytes gone from the middle of a page, so its segment table points past the next page's start.
    const ogg = await speech(2, "audio", ["-c:a", "flac", "-f", "ogg"]);
    const pages: number[] = [];
    for (let at = 0; at < ogg.length; at += 27 + ogg[at + 26] + ogg.subarray(at + 27, at + 27 + ogg[at + 26]).reduce((n, x) => n + x, 0)) pages.push(at);
    const middle = Math.floor((pages.at(-3)! + pages.at(-2)!) / 2);
    const oggCut = new Uint8Array(Buffer.concat([ogg.subarray(0, middle), ogg.subarray(middle + 60)]));
    // WebM: the Channels element's one-byte size made two bytes (1793), running past its Audio parent into the clusters.
    const webm = await fixture("speech.webm");
    const channels = Buffer.from(webm).indexOf(Buffer.from([0x9f, 0x81, 0x01]));
    const leafOverrun = webm.slice();
    leafOverrun[channels + 1] = 0x47;
    // WebM: a Segment size that ends inside the first cluster.
    const segment = Buffer.from(webm).indexOf(Buffer.from([0x18, 0x53, 0x80, 0x67]));
    const shortSegment = webm.slice();
    new DataView(shortSegment.buffer).setUint32(segment + 8, 0x800);
    for (const [name, bytes] of [
      ["Ogg page", oggCut],
      ["Matroska element", leafOverrun],
      ["Matroska Segment", shortSegment],
    ] as const) {
      const decoded = await decodedSeconds(bytes, "wrong-length");
      expect({ name, atLeastDecoded: probeDuration(bytes).seconds >= decoded }).toEqual({ name, atLeastDecoded: true });
    }
  });

  test("sample counts beyond the file's size are refused at once, not walked", async () => {
    const m4a = (await fixture("speech.m4a")).slice();
    const at = Buffer.from(m4a).indexOf("stsz") + 4;
    new DataView(m4a.buffer).setUint32(at + 4, 1); // every sample 1 byte
    new DataView(m4a.buffer).setUint32(at + 8, 0xffffffff); // 4 billion of them
    // Refused by the count itself, before any sample is read: walking them would end in another reason, or a duration.
    expect(refusal(m4a)).toMatchObject({ code: "indeterminate_audio_duration", message: expect.stringContaining("the MP4 sample tables count more samples than the file has bytes") });
  });

  test("a codec or container whose frames cannot be measured is 422 indeterminate_audio_duration", async () => {
    const unmeasurable = [
      ["-c:a", "adpcm_ima_wav", "-f", "wav"],
      ["-c:a", "ac3", "-f", "mp4"],
      ["-c:a", "pcm_s16le", "-f", "mov"],
      ["-c:a", "pcm_s16be", "-f", "aiff"],
    ];
    for (const args of unmeasurable) expect(refusal(await speech(1, "audio", args))).toMatchObject({ code: "indeterminate_audio_duration" });
  });
});

describe.skipIf(!localSttAvailable)("POST /v1/stt/transcriptions with the local recognizer", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop(0));

  const multipart = async (file: string, fields: Record<string, string>, key = server.key) => {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.set(k, v);
    form.set("file", new Blob([await fixture(file)]), file);
    const res = await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: bearer(key), body: form });
    return { status: res.status, body: (await res.json()) as any };
  };

  test("multipart WAV: the transcript, its segments, the probed duration and whole seconds billed", async () => {
    const { key, tenantId } = await createKey(server.ctx.database, `files-${crypto.randomUUID()}`);
    await server.ctx.meter.ledger.credit(tenantId, { credits: 1_000_000, type: "adjustment", description: "test" });
    const { status, body } = await multipart("speech.wav", { model: "pocketsphinx-en-us" }, key);
    expect(status).toBe(200);
    expect(body).toMatchObject({ text: "thank you very much for your help", provider: "pocketsphinx", model: "cmu/pocketsphinx-en-us", duration_seconds: 2.745, billed_seconds: 3 });
    expect(body.segments).toEqual([expect.objectContaining({ text: "thank you very much for your help" })]);
    const { db, schema } = server.ctx.database;
    const [record] = await db.select().from(schema.activity).where(eq(schema.activity.tenantId, tenantId)).orderBy(desc(schema.activity.startedAt));
    expect(record).toMatchObject({ capability: "stt", usageUnit: "seconds", usageAmount: 3, credits: 30, status: "completed" });
  });

  test("a transcription in flight counts as an open session, so a shutdown lets it finish and settle", async () => {
    const pending = multipart("speech.wav", { model: "pocketsphinx-en-us" });
    let seen = false;
    for (let i = 0; i < 200 && !seen; i++) {
      seen = server.ctx.sessions.size > 0;
      await Bun.sleep(5);
    }
    expect(seen).toBe(true);
    expect((await pending).status).toBe(200);
    for (let i = 0; i < 50 && server.ctx.sessions.size > 0; i++) await Bun.sleep(10);
    expect(server.ctx.sessions.size).toBe(0);
  });

  test("raw MP3 body with the fields in the query", async () => {
    const res = await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx-en-us&language=en`, {
      method: "POST",
      headers: { ...bearer(server.key), "content-type": "audio/mpeg" },
      body: await fixture("speech.mp3"),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).text).toBe("thank you very much for your help");
  });

  test("a container the embedded recognizer cannot read is 422 validation; a corrupt file 422 indeterminate_audio_duration", async () => {
    expect(await multipart("speech.flac", { model: "pocketsphinx-en-us" })).toMatchObject({ status: 422, body: { error: "validation" } });
    expect(await multipart("corrupt.mp3", { model: "pocketsphinx-en-us" })).toMatchObject({ status: 422, body: { error: "indeterminate_audio_duration" } });
  });

  test("bad requests: no key 401, no model 400, unknown field 400, no file 400, no balance 402", async () => {
    const noKey = await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", body: await fixture("speech.wav") });
    expect(noKey.status).toBe(401);
    expect((await multipart("speech.wav", {})).body).toMatchObject({ error: "model_required" });
    expect((await multipart("speech.wav", { model: "pocketsphinx-en-us", temperature: "0" })).status).toBe(200); // unknown multipart fields are not ours to judge
    const unknown = await fetch(`${server.url}/v1/stt/transcriptions?model=pocketsphinx-en-us&colour=blue`, {
      method: "POST",
      headers: { ...bearer(server.key), "content-type": "audio/wav" },
      body: await fixture("speech.wav"),
    });
    expect(unknown.status).toBe(400);
    const form = new FormData();
    form.set("model", "pocketsphinx-en-us");
    const noFile = await fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: bearer(server.key), body: form });
    expect(noFile.status).toBe(400);
    const { key: broke } = await createKey(server.ctx.database, `files-broke-${crypto.randomUUID()}`);
    expect((await multipart("speech.wav", { model: "pocketsphinx-en-us" }, broke)).status).toBe(402);
  });
});
