import { join } from "node:path";
import { tempDir } from "./temp-dirs.ts";

// Real speech in every container (made by ffmpeg from a fixture), and the same files with their
// headers forged to claim less audio than they hold. The truth is measured independently: ffmpeg
// decodes the file and the samples are counted.

const FIXTURE = new URL("../fixtures/speech.wav", import.meta.url).pathname;
const dir = tempDir("voxroute-forged-");

let made = 0;

async function run(args: string[]): Promise<Uint8Array> {
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).bytes(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`${args.join(" ")}: ${err}`);
  return out;
}

/** The fixture's sentence said `times` times over, encoded by ffmpeg with `args` into a file named `name`. */
export async function speech(times: number, name: string, args: string[]): Promise<Uint8Array> {
  const path = join(dir, `${made++}-${name}`);
  await run(["ffmpeg", "-v", "error", "-y", "-stream_loop", String(times - 1), "-i", FIXTURE, ...args, path]);
  return new Uint8Array(await Bun.file(path).arrayBuffer());
}

/** Seconds of audio ffmpeg decodes from the file (resampled to 48 kHz mono, samples counted). */
export async function decodedSeconds(bytes: Uint8Array, name: string): Promise<number> {
  const path = join(dir, `${made++}-${name}`);
  await Bun.write(path, bytes);
  const pcm = await run(["ffmpeg", "-v", "error", "-i", path, "-f", "s16le", "-ac", "1", "-ar", "48000", "-"]);
  return pcm.length / 2 / 48000;
}

const le32 = (n: number) => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, n, true);
  return b;
};
const ascii = (s: string) => new TextEncoder().encode(s);
const cat = (...parts: Uint8Array[]) => new Uint8Array(Buffer.concat(parts));

// --- WAV -----------------------------------------------------------------------------------------

export interface WavParts {
  fmt: Uint8Array;
  pcm: Uint8Array;
}

/** The fmt chunk's body and the PCM of a plain WAV (as ffmpeg writes it). */
export function wavParts(wav: Uint8Array): WavParts {
  const v = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const parts: Partial<WavParts> = {};
  for (let at = 12; at + 8 <= wav.length; ) {
    const tag = new TextDecoder().decode(wav.subarray(at, at + 4));
    const size = v.getUint32(at + 4, true);
    if (tag === "fmt ") parts.fmt = wav.slice(at + 8, at + 8 + size);
    if (tag === "data") parts.pcm = wav.slice(at + 8, at + 8 + size);
    at += 8 + size + (size & 1);
  }
  return parts as WavParts;
}

/** A chunk: its tag, its body, and the size its header declares (the body's length unless forged). */
export const chunk = (tag: string, body: Uint8Array, declared = body.length) => cat(ascii(tag), le32(declared), body);

export const riff = (...chunks: Uint8Array[]) => {
  const body = cat(ascii("WAVE"), ...chunks);
  return cat(ascii("RIFF"), le32(body.length), body);
};

/** The fmt body with a field overwritten: 12 nBlockAlign (16-bit), 8 nAvgBytesPerSec (32-bit). */
export function fmtWith(fmt: Uint8Array, at: 8 | 12, value: number): Uint8Array {
  const out = fmt.slice();
  const v = new DataView(out.buffer);
  if (at === 12) v.setUint16(at, value, true);
  else v.setUint32(at, value, true);
  return out;
}

// --- MP3 -----------------------------------------------------------------------------------------

/** The first frame's Xing/Info header made to claim one frame (and a few bytes). */
export function mp3WithXingFrames(mp3: Uint8Array, frames: number): Uint8Array {
  const out = mp3.slice();
  const at = Buffer.from(out).findIndex((_, i) => /^(Xing|Info)$/.test(new TextDecoder().decode(out.subarray(i, i + 4))));
  if (at < 0) throw new Error("no Xing/Info header");
  const v = new DataView(out.buffer);
  const flags = v.getUint32(at + 4);
  if (!(flags & 1)) throw new Error("the Xing header has no frame count");
  v.setUint32(at + 8, frames);
  if (flags & 2) v.setUint32(at + 12, 1000);
  return out;
}

// --- MP4 -----------------------------------------------------------------------------------------

/** Every box's payload offset and end, depth first, descending into the boxes that hold boxes. */
function* mp4Boxes(b: Uint8Array, from = 0, to = b.length): Generator<{ type: string; at: number; end: number }> {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let at = from; at + 8 <= to; ) {
    const size = v.getUint32(at);
    const type = new TextDecoder().decode(b.subarray(at + 4, at + 8));
    yield { type, at: at + 8, end: at + size };
    if (["moov", "trak", "mdia", "minf", "stbl", "edts", "moof", "traf"].includes(type)) yield* mp4Boxes(b, at + 8, at + size);
    at += size;
  }
}

/**
 * An MP4 whose every duration claims a millisecond or less: movie, track and media header durations,
 * edit list, time-to-sample deltas; with `timescale`, the media timescale multiplied too.
 */
export function mp4WithDurations(mp4: Uint8Array, options: { timescale?: number } = {}): Uint8Array {
  const out = mp4.slice();
  const v = new DataView(out.buffer);
  const forged = new Set<string>();
  for (const box of mp4Boxes(out)) {
    if (out[box.at] !== 0 && ["mvhd", "tkhd", "mdhd", "elst"].includes(box.type)) throw new Error(`${box.type} version 1 is not forged here`);
    if (box.type === "mvhd" || box.type === "mdhd") v.setUint32(box.at + 16, 1);
    if (box.type === "mdhd" && options.timescale) v.setUint32(box.at + 12, v.getUint32(box.at + 12) * options.timescale);
    if (box.type === "tkhd") v.setUint32(box.at + 20, 1);
    if (box.type === "elst") v.setUint32(box.at + 8, 1);
    if (box.type === "stts") for (let i = 0; i < v.getUint32(box.at + 4); i++) v.setUint32(box.at + 12 + i * 8, 1);
    forged.add(box.type);
  }
  for (const type of ["mvhd", "tkhd", "mdhd", "elst", "stts"]) if (!forged.has(type)) throw new Error(`no ${type} box to forge`);
  return out;
}

// --- WebM ----------------------------------------------------------------------------------------

/** The Segment Info's Duration (a float) set to `ms` milliseconds (at the default timecode scale). */
export function webmWithDuration(webm: Uint8Array, ms: number): Uint8Array {
  const out = webm.slice();
  const at = out.findIndex((b, i) => b === 0x44 && out[i + 1] === 0x89);
  const size = out[at + 2] & 0x7f;
  const v = new DataView(out.buffer, at + 3, size);
  if (size === 8) v.setFloat64(0, ms);
  else v.setFloat32(0, ms);
  return out;
}

// --- Ogg -----------------------------------------------------------------------------------------

const OGG_CRC = Array.from({ length: 256 }, (_, n) => {
  let r = n << 24;
  for (let i = 0; i < 8; i++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});

/** Every page's granule position (its running sample count) set to `granule`, checksums made right. */
export function oggWithGranules(ogg: Uint8Array, granule: number): Uint8Array {
  const out = ogg.slice();
  const v = new DataView(out.buffer);
  for (let at = 0; at + 27 <= out.length; ) {
    const segments = out[at + 26];
    const end = at + 27 + segments + out.subarray(at + 27, at + 27 + segments).reduce((n, s) => n + s, 0);
    if (v.getBigInt64(at + 6, true) > 0n) v.setBigInt64(at + 6, BigInt(granule), true);
    v.setUint32(at + 22, 0);
    let crc = 0;
    for (let i = at; i < end; i++) crc = ((crc << 8) ^ OGG_CRC[((crc >>> 24) ^ out[i]) & 0xff]) >>> 0;
    v.setUint32(at + 22, crc, true);
    at = end;
  }
  return out;
}

// --- FLAC ----------------------------------------------------------------------------------------

/** STREAMINFO's total sample count (36 bits) set to `samples`. */
export function flacWithTotalSamples(flac: Uint8Array, samples: number): Uint8Array {
  const out = flac.slice();
  const info = 8; // "fLaC", then STREAMINFO's block header
  out[info + 13] = (out[info + 13] & 0xf0) | Math.floor(samples / 2 ** 32);
  new DataView(out.buffer).setUint32(info + 14, samples % 2 ** 32);
  return out;
}

// --- Anything ------------------------------------------------------------------------------------

/** Bytes that are no audio and no well-formed structure, appended. */
export const withJunk = (bytes: Uint8Array) =>
  cat(
    bytes,
    new Uint8Array(4096).map((_, i) => (i * 7919) % 251),
  );

// --- Matroska, written by hand -------------------------------------------------------------------

/** An EBML element: its ID's bytes, an 8-byte size (or "unknown"), its body. */
function ebml(id: number, ...body: Uint8Array[]): Uint8Array {
  const idBytes = Buffer.from(id.toString(16).padStart(id > 0xffffff ? 8 : id > 0xffff ? 6 : id > 0xff ? 4 : 2, "0"), "hex");
  const data = cat(...body);
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(BigInt(data.length));
  size[0] = 0x01;
  return cat(idBytes, size, data);
}
const uint = (n: number) => new Uint8Array([n]);
const unknownSize = (id: number, ...body: Uint8Array[]) => cat(Buffer.from(id.toString(16), "hex"), new Uint8Array([0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), ...body);

/**
 * A WebM of Opus frames (CELT, 20 ms each: TOC byte 0xf8) in SimpleBlocks laced `lacing` ways, as a
 * live recording writes it (Segment and Clusters of unknown size). With `stripped`, the TOC byte is
 * kept once in the track's header-stripping ContentEncoding and left out of every frame.
 */
export function lacedOpusWebm(blocks: number, framesPerBlock: number, lacing: "xiph" | "ebml" | "fixed", stripped = false): Uint8Array {
  const frame = stripped ? new Uint8Array([0, 0, 0]) : new Uint8Array([0xf8, 0, 0, 0]);
  const lacingBits = { xiph: 1, fixed: 2, ebml: 3 }[lacing];
  const sizes = framesPerBlock - 1;
  const head = lacing === "xiph" ? Array(sizes).fill(frame.length) : lacing === "ebml" ? [0x80 | frame.length, ...Array(sizes - 1).fill(0xbf)] : []; // EBML: the first size, then differences of 0
  const block = cat(new Uint8Array([0x81, 0, 0, 0x80 | (lacingBits << 1), framesPerBlock - 1, ...head]), ...Array(framesPerBlock).fill(frame));
  const opusHead = cat(ascii("OpusHead"), new Uint8Array([1, 1, 0x38, 0x01, 0x80, 0xbb, 0, 0, 0, 0, 0]));
  const encoding = stripped ? [ebml(0x6d80, ebml(0x6240, ebml(0x5034, ebml(0x4254, uint(3)), ebml(0x4255, uint(0xf8)))))] : [];
  const track = ebml(0xae, ebml(0xd7, uint(1)), ebml(0x83, uint(2)), ebml(0x86, ascii("A_OPUS")), ebml(0x63a2, opusHead), ...encoding, ebml(0xe1, ebml(0x9f, uint(1))));
  const clusters = Array.from({ length: blocks }, (_, i) => unknownSize(0x1f43b675, ebml(0xe7, uint(i)), ebml(0xa3, block)));
  return cat(ebml(0x1a45dfa3, ebml(0x4282, ascii("webm"))), unknownSize(0x18538067, ebml(0x1654ae6b, track), ...clusters));
}
