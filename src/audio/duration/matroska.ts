import { aacFrameSeconds } from "./aac.ts";
import { view } from "./bits.ts";
import { indeterminate } from "./indeterminate.ts";
import { fixedClock, flacClock, mpegClock, opusClock, pcmClock, vorbisPacketClock, type PacketClock } from "./packet-clocks.ts";

// Matroska/WebM measured by its blocks: every frame of every audio track's blocks, each measured
// from its own bytes. The header's Duration, block timestamps and DefaultDuration are claims and are
// not read (a browser recording writes no Duration; a forged file can write any). Tracks play side
// by side: the longest one is the file's length.

const ID = {
  EBML: 0x1a45dfa3,
  DocType: 0x4282,
  Segment: 0x18538067,
  Tracks: 0x1654ae6b,
  TrackEntry: 0xae,
  TrackNumber: 0xd7,
  TrackType: 0x83,
  CodecID: 0x86,
  CodecPrivate: 0x63a2,
  Audio: 0xe1,
  SamplingFrequency: 0xb5,
  Channels: 0x9f,
  BitDepth: 0x6264,
  ContentEncodings: 0x6d80,
  ContentEncoding: 0x6240,
  ContentCompression: 0x5034,
  ContentCompAlgo: 0x4254,
  ContentCompSettings: 0x4255,
  Cluster: 0x1f43b675,
  BlockGroup: 0xa0,
  Block: 0xa1,
  SimpleBlock: 0xa3,
};
/** Elements whose children are read; every other element is stepped over whole. */
const MASTERS = new Set([ID.EBML, ID.Segment, ID.Tracks, ID.TrackEntry, ID.Audio, ID.ContentEncodings, ID.ContentEncoding, ID.ContentCompression, ID.Cluster, ID.BlockGroup]);
const AUDIO_TRACK = 2;
/** ContentCompAlgo of header stripping: bytes every frame starts with are kept once, in the header. */
const HEADER_STRIPPING = 3;

interface Track {
  number?: number;
  type?: number;
  codec?: string;
  codecPrivate?: Uint8Array;
  rate?: number;
  channels?: number;
  bitDepth?: number;
  /** ContentEncoding: frames are stored transformed (compressed or encrypted). */
  encoded?: boolean;
  compression?: { algo: number; settings?: Uint8Array };
}

/** The track fields stored as unsigned integers, by element ID. */
const TRACK_UINTS = new Map<number, "number" | "type" | "channels" | "bitDepth">([
  [ID.TrackNumber, "number"],
  [ID.TrackType, "type"],
  [ID.Channels, "channels"],
  [ID.BitDepth, "bitDepth"],
]);

/** An EBML variable-length integer: its value (undefined when all its bits are set: "unknown") and length. */
function vint(b: Uint8Array, at: number, keepMarker = false): { value: number | undefined; length: number } | undefined {
  const first = b[at];
  if (!first) return; // past the end, or a length over 8 bytes
  const length = Math.clz32(first) - 23;
  if (at + length > b.length) return;
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + b[at + i];
    allOnes &&= b[at + i] === 0xff;
  }
  return { value: allOnes && !keepMarker ? undefined : value, length };
}

/** Laced frames from `at` (a count byte, then sizes by `readSizes`): the last one runs to the end. */
function laced(b: Uint8Array, at: number, readSizes: (count: number, at: number) => { sizes: number[]; at: number } | undefined): Uint8Array[] | undefined {
  const read = readSizes((b[at] ?? 0) + 1, at + 1);
  if (!read) return;
  const frames: Uint8Array[] = [];
  for (const size of read.sizes) {
    if (size < 0 || read.at + size > b.length) return;
    frames.push(b.subarray(read.at, (read.at += size)));
  }
  return [...frames, b.subarray(read.at)];
}

/** Xiph lacing: each size but the last as a run of 255s and a last byte. */
const xiphLaced = (b: Uint8Array, at: number) =>
  laced(b, at, (count, p) => {
    const sizes: number[] = [];
    for (let i = 0; i < count - 1; i++) {
      let size = 0;
      while (b[p] === 255) size += b[p++];
      sizes.push(size + (b[p++] ?? 0));
    }
    return { sizes, at: p };
  });

/** EBML lacing: the first size, then signed differences. */
const ebmlLaced = (b: Uint8Array, at: number) =>
  laced(b, at, (count, p) => {
    const sizes: number[] = [];
    for (let i = 0; i < count - 1; i++) {
      const n = vint(b, p);
      if (n?.value === undefined) return;
      sizes.push(i === 0 ? n.value : sizes[i - 1] + n.value - (2 ** (7 * n.length - 1) - 1));
      p += n.length;
    }
    return { sizes, at: p };
  });

/** Fixed-size lacing: frames of equal size. */
const fixedLaced = (b: Uint8Array, at: number) => laced(b, at, (count, p) => ({ sizes: Array(count - 1).fill(Math.floor((b.length - p) / count)), at: p }));

/** The frames of a Block or SimpleBlock (track number, timecode, flags, data): one, or several when laced. */
function blockFrames(block: Uint8Array): { track: number; frames: Uint8Array[] } | undefined {
  const track = vint(block, 0);
  const at = (track?.length ?? 0) + 3;
  if (!track?.value || at > block.length) return;
  const lacing = (block[at - 1] >> 1) & 3;
  const frames = lacing === 0 ? [block.subarray(at)] : lacing === 1 ? xiphLaced(block, at) : lacing === 3 ? ebmlLaced(block, at) : fixedLaced(block, at);
  return frames && { track: track.value, frames };
}

/** The track's clock, given each frame as the decoder sees it (with any stripped header put back). */
function clockOf(track: Track): PacketClock {
  const clock = codecClock(track);
  if (!track.encoded) return clock;
  const { algo, settings } = track.compression ?? { algo: -1 };
  if (algo !== HEADER_STRIPPING) throw indeterminate("a Matroska audio track whose frames are compressed or encrypted");
  return settings?.length ? (frame) => clock(Buffer.concat([settings, frame])) : clock;
}

function codecClock(track: Track): PacketClock {
  const codec = track.codec ?? "";
  const priv = track.codecPrivate ?? new Uint8Array(0);
  if (codec === "A_OPUS") return opusClock;
  if (codec === "A_VORBIS") {
    const [identification, , setup] = xiphLaced(priv, 0) ?? []; // Vorbis keeps its three headers in CodecPrivate
    if (setup) return vorbisPacketClock(identification, setup);
  }
  if (codec === "A_FLAC" && priv.length > 8) return flacClock(priv.subarray(8)); // "fLaC", a block header, STREAMINFO
  if (codec === "A_AAC" && priv.length) return fixedClock(aacFrameSeconds(priv));
  if (codec.startsWith("A_AAC/") && track.rate) return fixedClock(1024 / track.rate);
  if (/^A_MPEG\/L[123]$/.test(codec)) return mpegClock;
  if (/^A_PCM\//.test(codec) && track.rate && track.channels && track.bitDepth && track.bitDepth % 8 === 0) return pcmClock((track.channels * track.bitDepth) / 8, track.rate);
  throw indeterminate(`a Matroska audio track of a codec that cannot be measured (${codec || "none"})`);
}

/** Every place a Cluster starts, by its ID: 4 bytes that occur by chance once in 4 GB. */
function* clusterStarts(b: Uint8Array, from = 0): Generator<number> {
  for (let at = b.indexOf(0x1f, from); at >= 0; at = b.indexOf(0x1f, at + 1)) {
    if (b[at + 1] === 0x43 && b[at + 2] === 0xb6 && b[at + 3] === 0x75) yield at;
  }
}

/** The element at `at`: its ID, where its data starts and ends (Infinity: unknown size). */
function element(b: Uint8Array, at: number): { id: number; start: number; end: number } | undefined {
  const id = vint(b, at, true);
  const size = id && id.length <= 4 ? vint(b, at + id.length) : undefined;
  if (!id || !size) return;
  const start = at + id.length + size.length;
  return { id: id.value!, start, end: size.value === undefined ? Infinity : start + size.value };
}

/** The blocks of the cluster at `at`, read until its end or the first thing that is not its child. */
function clusterBlocks(b: Uint8Array, at: number, blocks: Map<number, Uint8Array>): void {
  const cluster = element(b, at)!;
  let groupEnd = 0;
  for (at = cluster.start; at < Math.min(cluster.end, b.length); ) {
    const e = element(b, at);
    if (!e || e.id === ID.Cluster || e.end > Math.min(cluster.end, b.length) || e.end === Infinity) return;
    if (e.id === ID.BlockGroup) {
      groupEnd = e.end;
      at = e.start;
      continue;
    }
    if (e.id === ID.SimpleBlock || (e.id === ID.Block && at < groupEnd)) blocks.set(e.start, b.subarray(e.start, e.end));
    at = e.end;
  }
}

export function matroskaSeconds(b: Uint8Array): number {
  const tracks: Track[] = [];
  /** Blocks by where their data starts: the same block found twice is counted once. */
  const blocks = new Map<number, Uint8Array>();
  const data = view(b);
  /** Where the enclosing masters of known size end, innermost last. */
  const ends: number[] = [];
  let at = 0;
  while (at < b.length) {
    while (ends.length && ends.at(-1)! <= at) ends.pop();
    const e = element(b, at);
    const master = !!e && MASTERS.has(e.id);
    if (!e || e.end > (ends.at(-1) ?? Infinity) || (!master && e.end > b.length)) {
      // Not an element, or one that overruns its parent or the file: resynchronise on the next
      // Cluster after where it starts, as FFmpeg does.
      at = clusterStarts(b, at + 1).next().value ?? b.length;
      ends.length = 0;
      continue;
    }
    const { id, start, end } = e;
    const track = tracks.at(-1);
    if (master) {
      // Children are read in place: an element of unknown size (live recordings) needs no end.
      if (id === ID.TrackEntry) tracks.push({});
      else if (id === ID.ContentEncoding && track) track.encoded = true;
      else if (id === ID.ContentCompression && track) track.compression = { algo: 0 };
      if (end !== Infinity) ends.push(end);
      at = start;
      continue;
    }
    const body = b.subarray(start, end);
    const uint = () => body.reduce((n, x) => n * 256 + x, 0);
    const field = TRACK_UINTS.get(id);
    if (field && track) track[field] = uint();
    switch (id) {
      case ID.DocType:
        if (!/^(webm|matroska)$/.test(new TextDecoder().decode(body))) throw indeterminate("an EBML file that is not Matroska or WebM");
        break;
      case ID.SimpleBlock:
      case ID.Block:
        blocks.set(start, body);
        break;
      case ID.CodecID:
        if (track) track.codec = new TextDecoder().decode(body).replace(/\0+$/, "");
        break;
      case ID.CodecPrivate:
        if (track) track.codecPrivate = body;
        break;
      case ID.SamplingFrequency:
        if (track) track.rate = body.length === 4 ? data.getFloat32(start) : body.length === 8 ? data.getFloat64(start) : undefined;
        break;
      case ID.ContentCompAlgo:
        if (track?.compression) track.compression.algo = uint();
        break;
      case ID.ContentCompSettings:
        if (track?.compression) track.compression.settings = body;
        break;
    }
    at = end;
  }
  // Every cluster again, from its own start: a cluster the walk above stepped over (a wrong size
  // before it) is still played by a decoder that resynchronises.
  for (const cluster of clusterStarts(b)) clusterBlocks(b, cluster, blocks);
  const audioTracks = tracks.filter((t) => t.type === AUDIO_TRACK && t.number);
  const audio = new Map(audioTracks.map((t) => [t.number!, { clock: clockOf(t), seconds: 0 }]));
  if (!audio.size) throw indeterminate("the Matroska file has no audio track");
  if (audio.size < audioTracks.length) throw indeterminate("two Matroska audio tracks have the same number");
  for (const [, block] of [...blocks].sort(([a], [b]) => a - b)) {
    const laced = blockFrames(block);
    const track = laced && audio.get(laced.track);
    if (track) for (const frame of laced.frames) track.seconds += track.clock(frame);
  }
  return Math.max(...[...audio.values()].map((t) => t.seconds));
}
