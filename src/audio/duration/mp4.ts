import { aacFrameSeconds } from "./aac.ts";
import { fourcc, view } from "./bits.ts";
import { indeterminate } from "./indeterminate.ts";
import { flacClock, mpegClock, opusClock, type PacketClock } from "./packet-clocks.ts";

// MP4/M4A (and QuickTime) measured by its samples: every sample each audio track's sample tables
// and fragments index (each one a decoder plays), measured by its codec: AAC and ALAC samples each
// play one frame (AAC: 1024 samples at the rate of its AudioSpecificConfig); Opus, MP3 and FLAC
// samples are read and measured from their own bytes. The movie and media header durations (mvhd,
// tkhd, mdhd), the time-to-sample durations (stts), the timescale and edit lists are claims and are
// not read. Tracks play side by side: the longest one is the file's length.

interface Box {
  type: string;
  /** Where the box starts, where its payload starts, where it ends. */
  start: number;
  at: number;
  end: number;
}

const CONTAINERS = new Set(["moov", "trak", "mdia", "minf", "stbl", "mvex", "moof", "traf", "wave"]);

function* boxes(b: Uint8Array, from: number, to: number): Generator<Box> {
  const v = view(b);
  for (let at = from; at + 8 <= to; ) {
    let size = v.getUint32(at);
    let header = 8;
    if (size === 1 && at + 16 <= to) {
      size = Number(v.getBigUint64(at + 8));
      header = 16;
    } else if (size === 0) size = to - at;
    if (size < header) return;
    yield { type: fourcc(b, at + 4), start: at, at: at + header, end: Math.min(at + size, to) };
    at += size;
  }
}

/** Every box under `from..to`, depth first, with the `trak`, `traf` or `moof` it belongs to. */
function* allBoxes(b: Uint8Array, from = 0, to = b.length, owners: Record<string, Box> = {}): Generator<Box & { owners: Record<string, Box> }> {
  for (const box of boxes(b, from, to)) {
    yield { ...box, owners };
    if (CONTAINERS.has(box.type)) yield* allBoxes(b, box.at, box.end, ["trak", "traf", "moof"].includes(box.type) ? { ...owners, [box.type]: box } : owners);
  }
}

/** A codec's samples: each plays a fixed time, or each is read and measured by its bytes. */
type SampleClock = { each: number } | { packet: PacketClock };

/** objectTypeIndication values whose decoder config is an AudioSpecificConfig (MPEG-4 audio, MPEG-2 AAC), and MPEG audio's. */
const AAC_OBJECT_TYPES = new Set([0x40, 0x66, 0x67, 0x68]);
const MPEG_AUDIO_OBJECT_TYPES = new Set([0x69, 0x6b]);

/** How a sound sample entry's samples play, by its codec. */
function sampleClock(b: Uint8Array, entry: Box): SampleClock {
  const v = view(b);
  // QuickTime sound descriptions version 1 and 2 carry 16 and 36 more bytes before their child boxes.
  const version = v.getUint16(entry.at + 8);
  const children = entry.at + 28 + (version === 1 ? 16 : version === 2 ? 36 : 0);
  const child = (type: string) => [...allBoxes(b, children, entry.end)].find((x) => x.type === type);
  const esds = entry.type === "mp4a" ? child("esds") : undefined;
  const decoder = esds && decoderConfig(b.subarray(esds.at + 4, esds.end));
  if (decoder && AAC_OBJECT_TYPES.has(decoder.objectType) && decoder.specific) return { each: aacFrameSeconds(decoder.specific) };
  if ((decoder && MPEG_AUDIO_OBJECT_TYPES.has(decoder.objectType)) || entry.type === ".mp3") return { packet: mpegClock };
  if (entry.type === "Opus") return { packet: opusClock };
  const dfLa = entry.type === "fLaC" ? child("dfLa") : undefined;
  if (dfLa) return { packet: flacClock(b.subarray(dfLa.at + 8, dfLa.end)) }; // version and flags, STREAMINFO's block header
  const alac = entry.type === "alac" ? child("alac") : undefined;
  if (alac && alac.end - alac.at >= 28 && v.getUint32(alac.at + 24)) return { each: v.getUint32(alac.at + 4) / v.getUint32(alac.at + 24) }; // frame length, sample rate
  throw indeterminate(`an MP4 audio track of a codec that cannot be measured (${entry.type})`);
}

/** The object type and decoder-specific info inside an ES descriptor (ISO 14496-1 §7.2.6). */
function decoderConfig(d: Uint8Array): { objectType: number; specific?: Uint8Array } | undefined {
  let at = 0;
  const descriptor = (tag: number) => {
    if (d[at++] !== tag) return;
    let size = 0;
    for (let i = 0; i < 4; i++) {
      const byte = d[at++];
      size = (size << 7) | (byte & 0x7f);
      if (!(byte & 0x80)) break;
    }
    return size;
  };
  if (descriptor(0x03) === undefined) return;
  at += 2; // ES_ID
  const flags = d[at++];
  if (flags & 0x80) at += 2; // dependsOn_ES_ID
  if (flags & 0x40) at += 1 + d[at]; // URL
  if (flags & 0x20) at += 2; // OCR_ES_Id
  if (descriptor(0x04) === undefined) return;
  const objectType = d[at];
  at += 13;
  const size = descriptor(0x05);
  return { objectType, specific: size ? d.subarray(at, at + size) : undefined };
}

/** A run of samples stored one after another: where the first starts, how many, each one's size. */
interface Run {
  at: number;
  count: number;
  size: (i: number) => number;
}

interface Track {
  id?: number;
  audio?: boolean;
  entries: Box[];
  /** Samples the time-to-sample table counts (a decoder may go by it or by the size table). */
  timed: number;
  /** The sample size table, and the chunk table's offsets and runs of samples per chunk. */
  sizes: { count: number; size: (i: number) => number };
  chunks: number[];
  samplesPerChunk: { firstChunk: number; samples: number }[];
  /** The default sample size of the track's fragments (its `trex`). */
  defaultSize?: number;
}

/** The sample tables' samples, as runs: one per chunk. */
function* chunkRuns(t: Track): Generator<Run> {
  let sample = 0;
  for (const [i, { firstChunk, samples }] of t.samplesPerChunk.entries()) {
    const next = Math.min(t.samplesPerChunk[i + 1]?.firstChunk ?? Infinity, t.chunks.length + 1);
    for (let chunk = firstChunk; samples && chunk < next && sample < t.sizes.count; chunk++) {
      const first = sample;
      const count = Math.min(samples, t.sizes.count - first);
      yield { at: t.chunks[chunk - 1], count, size: (k) => t.sizes.size(first + k) };
      sample += count;
    }
  }
}

/** How a track's samples play: each a fixed time (the longest of its entries'), or each by its bytes. */
function trackClock(b: Uint8Array, t: Track): SampleClock {
  const clocks = t.entries.map((entry) => sampleClock(b, entry));
  if (clocks.every((c) => "each" in c)) return { each: Math.max(0, ...clocks.map((c) => ("each" in c ? c.each : 0))) };
  if (clocks.length > 1) throw indeterminate("an MP4 audio track of several codecs");
  return clocks[0];
}

const runSeconds = (b: Uint8Array, run: Run, packet: PacketClock) => {
  let seconds = 0;
  for (let i = 0, at = run.at; i < run.count && at < b.length; i++) seconds += packet(b.subarray(at, (at += run.size(i))));
  return seconds;
};

/** No sample is smaller than a byte: tables that count more are not a recording. */
const tooMany = () => indeterminate("the MP4 sample tables count more samples than the file has bytes");

export function mp4Seconds(b: Uint8Array): number {
  const v = view(b);
  const tracks = new Map<Box, Track>();
  const byId = new Map<number, Track>();
  /** A table of `count` entries `stride` bytes apart from `from`, cut at the end of its box. */
  const tableLength = (box: Box, from: number, stride: number) => Math.max(0, Math.min(v.getUint32(box.at + 4), Math.floor((box.end - from) / stride)));
  const fragments: (Box & { owners: Record<string, Box> })[] = [];
  for (const box of allBoxes(b)) {
    if (box.type === "trex") {
      const track = byId.get(v.getUint32(box.at + 4));
      if (track) track.defaultSize = v.getUint32(box.at + 16);
    }
    if (box.type === "tfhd" || box.type === "trun") fragments.push(box);
    const trak = box.owners.trak;
    if (!trak) continue;
    let t = tracks.get(trak);
    if (!t) tracks.set(trak, (t = { entries: [], timed: 0, sizes: { count: 0, size: () => 0 }, chunks: [], samplesPerChunk: [] }));
    switch (box.type) {
      case "tkhd":
        t.id = v.getUint32(box.at + (b[box.at] === 1 ? 20 : 12));
        byId.set(t.id, t);
        break;
      case "hdlr":
        t.audio = fourcc(b, box.at + 8) === "soun";
        break;
      case "stsd":
        if (t.audio) t.entries = [...boxes(b, box.at + 8, box.end)];
        break;
      case "stts":
        for (let i = 0, n = tableLength(box, box.at + 8, 8); i < n; i++) t.timed += v.getUint32(box.at + 8 + i * 8);
        break;
      case "stsz": {
        const uniform = v.getUint32(box.at + 4);
        const at = box.at + 12;
        const count = v.getUint32(box.at + 8);
        t.sizes = uniform ? { count, size: () => uniform } : { count: Math.min(count, Math.floor((box.end - at) / 4)), size: (i) => v.getUint32(at + i * 4) };
        break;
      }
      case "stz2": {
        const bits = b[box.at + 7];
        const at = box.at + 12;
        const count = Math.min(v.getUint32(box.at + 8), Math.floor(((box.end - at) * 8) / (bits || 8)));
        t.sizes = { count, size: (i) => (bits === 4 ? (b[at + (i >> 1)] >> (i & 1 ? 0 : 4)) & 15 : bits === 8 ? b[at + i] : v.getUint16(at + i * 2)) };
        break;
      }
      case "stsc":
        t.samplesPerChunk = Array.from({ length: tableLength(box, box.at + 8, 12) }, (_, i) => ({ firstChunk: v.getUint32(box.at + 8 + i * 12), samples: v.getUint32(box.at + 12 + i * 12) }));
        break;
      case "stco":
        t.chunks = Array.from({ length: tableLength(box, box.at + 8, 4) }, (_, i) => v.getUint32(box.at + 8 + i * 4));
        break;
      case "co64":
        t.chunks = Array.from({ length: tableLength(box, box.at + 8, 8) }, (_, i) => Number(v.getBigUint64(box.at + 8 + i * 8)));
        break;
    }
  }
  const audio = [...tracks.values()].filter((t) => t.audio);
  if (!audio.length) throw indeterminate("the MP4 file has no audio track");
  const measured = new Map(
    audio.map((t) => {
      const clock = trackClock(b, t);
      const samples = Math.max(t.sizes.count, t.timed);
      if (samples > b.length) throw tooMany();
      let seconds = 0;
      if ("packet" in clock) for (const run of chunkRuns(t)) seconds += runSeconds(b, run, clock.packet);
      return [t, { clock, samples, seconds }];
    }),
  );
  // Fragments after the movie box, whose `trex` gives their default sample size.
  for (const run of fragmentRuns(b, fragments, byId)) {
    const m = measured.get(run.track);
    if (!m) continue;
    if ((m.samples += run.count) > b.length) throw tooMany();
    if ("packet" in m.clock) m.seconds += runSeconds(b, run, m.clock.packet);
  }
  return Math.max(...[...measured.values()].map((m) => ("each" in m.clock ? m.samples * m.clock.each : m.seconds)));
}

/** The runs of samples of movie fragments: each `trun` after its `tfhd`, sizes from it, the `tfhd` or the `trex`. */
function* fragmentRuns(b: Uint8Array, boxes: (Box & { owners: Record<string, Box> })[], byId: Map<number, Track>): Generator<Run & { track: Track }> {
  const v = view(b);
  let track: Track | undefined;
  let base = 0;
  let defaultSize = 0;
  let next = 0;
  for (const box of boxes) {
    const flags = v.getUint32(box.at) & 0xffffff;
    if (box.type === "tfhd") {
      track = byId.get(v.getUint32(box.at + 4));
      let at = box.at + 8;
      base = flags & 0x01 ? Number(v.getBigUint64(at)) : (box.owners.moof?.start ?? 0);
      if (flags & 0x01) at += 8;
      if (flags & 0x02) at += 4;
      if (flags & 0x08) at += 4;
      defaultSize = flags & 0x10 ? v.getUint32(at) : (track?.defaultSize ?? 0);
      next = base;
      continue;
    }
    if (!track) continue;
    const count = v.getUint32(box.at + 4);
    let at = box.at + 8;
    const start = flags & 0x01 ? base + v.getInt32(at) : next;
    if (flags & 0x01) at += 4;
    if (flags & 0x04) at += 4;
    // Each sample's fields, in order: duration, size, flags, composition offset.
    const stride = [0x100, 0x200, 0x400, 0x800].filter((f) => flags & f).length * 4;
    const sizeAt = at + (flags & 0x100 ? 4 : 0);
    const described = stride ? Math.min(count, Math.floor((box.end - at) / stride)) : count;
    if (described > b.length) throw tooMany();
    const fixed = defaultSize;
    const size = flags & 0x200 ? (i: number) => v.getUint32(sizeAt + i * stride) : () => fixed;
    let end = start;
    for (let i = 0; i < described && end < b.length; i++) end += size(i);
    next = end;
    yield { track, at: start, count: described, size };
  }
}
