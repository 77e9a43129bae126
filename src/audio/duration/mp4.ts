import { aacFrameSeconds } from "./aac.ts";
import { fourcc, view } from "./bits.ts";
import { indeterminate } from "./indeterminate.ts";

// MP4/M4A (and QuickTime) measured by its samples: the number of samples each audio track's sample
// tables and fragments index (every one a decoder plays), times how long one sample plays by its
// codec (AAC: a frame of 1024 samples at the rate of its AudioSpecificConfig; ALAC: its frame
// length). The movie and media header durations (mvhd, mdhd), the time-to-sample durations (stts)
// and edit lists are claims and are not read. Tracks play side by side: the longest one is the
// file's length.

interface Box {
  type: string;
  /** Where its payload starts and the box ends. */
  at: number;
  end: number;
}

const CONTAINERS = new Set(["moov", "trak", "mdia", "minf", "stbl", "moof", "traf", "wave"]);

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
    yield { type: fourcc(b, at + 4), at: at + header, end: Math.min(at + size, to) };
    at += size;
  }
}

/** Every box under `from..to`, depth first, with the track it belongs to (the enclosing `trak` or `traf`). */
function* allBoxes(b: Uint8Array, from = 0, to = b.length, owner?: Box): Generator<Box & { owner?: Box }> {
  for (const box of boxes(b, from, to)) {
    yield { ...box, owner };
    if (CONTAINERS.has(box.type)) yield* allBoxes(b, box.at, box.end, box.type === "trak" || box.type === "traf" ? box : owner);
  }
}

interface Track {
  id?: number;
  audio?: boolean;
  /** Seconds one sample plays. */
  sampleSeconds?: number;
  samples: number;
}

/** How long one sample of a sound sample entry plays, by its codec. */
function sampleSeconds(b: Uint8Array, entry: Box): number {
  const v = view(b);
  const format = entry.type;
  // QuickTime sound descriptions version 1 and 2 carry 16 and 36 more bytes before their child boxes.
  const version = v.getUint16(entry.at + 8);
  const children = entry.at + 28 + (version === 1 ? 16 : version === 2 ? 36 : 0);
  const child = (type: string) => [...allBoxes(b, children, entry.end)].find((x) => x.type === type);
  if (format === "mp4a") {
    const esds = child("esds");
    const config = esds && decoderSpecificInfo(b.subarray(esds.at + 4, esds.end));
    if (config) return aacFrameSeconds(config);
  }
  if (format === "alac") {
    const alac = child("alac");
    if (alac && alac.end - alac.at >= 28) {
      const frameLength = v.getUint32(alac.at + 4);
      const rate = v.getUint32(alac.at + 24);
      if (frameLength && rate) return frameLength / rate;
    }
  }
  throw indeterminate(`an MP4 audio track of a codec that cannot be measured (${format})`);
}

/** objectTypeIndication values whose decoder config is an AudioSpecificConfig: MPEG-4 audio, MPEG-2 AAC. */
const MPEG4_AUDIO = new Set([0x40, 0x66, 0x67, 0x68]);

/** The AudioSpecificConfig inside an ES descriptor (ISO 14496-1 §7.2.6), for AAC only. */
function decoderSpecificInfo(d: Uint8Array): Uint8Array | undefined {
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
  if (descriptor(0x04) === undefined || !MPEG4_AUDIO.has(d[at])) return; // objectTypeIndication
  at += 13;
  const size = descriptor(0x05);
  return size ? d.subarray(at, at + size) : undefined;
}

export function mp4Seconds(b: Uint8Array): number {
  const v = view(b);
  const tracks = new Map<Box, Track>();
  const byId = new Map<number, Track>();
  const fragments: { id: number; samples: number }[] = [];
  let fragmentTrack = 0;
  for (const box of allBoxes(b)) {
    if (box.type === "tfhd") fragmentTrack = v.getUint32(box.at + 4);
    if (box.type === "trun") fragments.push({ id: fragmentTrack, samples: v.getUint32(box.at + 4) });
    if (!box.owner || box.owner.type !== "trak") continue;
    let track = tracks.get(box.owner);
    if (!track) tracks.set(box.owner, (track = { samples: 0 }));
    switch (box.type) {
      case "tkhd":
        track.id = v.getUint32(box.at + (b[box.at] === 1 ? 20 : 12));
        byId.set(track.id, track);
        break;
      case "hdlr":
        track.audio = fourcc(b, box.at + 8) === "soun";
        break;
      case "stsd":
        // Samples may use any of the entries: each is measured, and the longest frame counts.
        if (track.audio) track.sampleSeconds = Math.max(0, ...[...boxes(b, box.at + 8, box.end)].map((entry) => sampleSeconds(b, entry)));
        break;
      case "stsz":
      case "stz2":
        track.samples = Math.max(track.samples, v.getUint32(box.at + 8));
        break;
      case "stts": {
        let counted = 0;
        for (let i = 0, n = v.getUint32(box.at + 4); i < n && box.at + 16 + i * 8 <= box.end; i++) counted += v.getUint32(box.at + 8 + i * 8);
        track.samples = Math.max(track.samples, counted);
        break;
      }
    }
  }
  for (const f of fragments) {
    const track = byId.get(f.id);
    if (track) track.samples += f.samples;
  }
  const audio = [...tracks.values()].filter((t) => t.audio);
  if (!audio.length) throw indeterminate("the MP4 file has no audio track");
  return Math.max(...audio.map((t) => t.samples * (t.sampleSeconds ?? 0)));
}
