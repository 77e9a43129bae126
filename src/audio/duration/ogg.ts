import { fourcc, view } from "./bits.ts";
import { indeterminate } from "./indeterminate.ts";
import { flacClock, opusClock, vorbisPacketClock, type PacketClock } from "./packet-clocks.ts";

// Ogg measured by its packets: every packet of every audio stream, each measured from its own
// bytes. Granule positions (the pages' running sample counts) are claims and are not read. Chained
// streams play one after another, so their seconds add up.

interface Stream {
  /** The stream's header packets so far, until its codec is known and its clock made. */
  headers: Uint8Array[];
  clock?: PacketClock;
  /** A stream that is not audio (a Skeleton index, video): its packets are not counted. */
  ignored?: boolean;
  partial: Uint8Array[];
}

const startsWith = (packet: Uint8Array, text: string) => [...text].every((c, i) => packet[i] === c.charCodeAt(0));
const NOT_AUDIO = ["fishead\0", "fisbone\0", "\x80theora", "\x80kate", "\x00daala"];

/** Called with each of a stream's leading packets until it has a clock or is known to carry no audio. */
function identify(stream: Stream, packet: Uint8Array): void {
  const [first] = (stream.headers = [...stream.headers, packet]);
  if (startsWith(first, "OpusHead")) {
    if (stream.headers.length === 2) stream.clock = opusClock; // OpusHead, OpusTags
  } else if (startsWith(first, "\x01vorbis")) {
    if (stream.headers.length === 3) stream.clock = vorbisPacketClock(first, packet); // identification, comment, setup
  } else if (startsWith(first, "\x7fFLAC")) {
    if (stream.headers.length === 1 + ((first[7] << 8) | first[8])) stream.clock = flacClock(first.subarray(17));
  } else if (NOT_AUDIO.some((tag) => startsWith(first, tag))) {
    stream.ignored = true;
  } else {
    throw indeterminate(`an Ogg stream of a codec that cannot be measured (${JSON.stringify(new TextDecoder().decode(first.subarray(0, 8)))})`);
  }
  if (stream.clock || stream.ignored) stream.headers = [];
}

export function oggSeconds(b: Uint8Array): number {
  const streams = new Map<number, Stream>();
  let seconds = 0;
  let at = 0;
  while (at + 27 <= b.length) {
    if (fourcc(b, at) !== "OggS") {
      // Not a page: resynchronise on the next capture pattern, as decoders do.
      at = b.indexOf(0x4f, at + 1);
      if (at < 0) break;
      continue;
    }
    const segments = b[at + 26];
    const table = b.subarray(at + 27, at + 27 + segments);
    let body = at + 27 + segments;
    const serial = view(b).getUint32(at + 14, true);
    let stream = streams.get(serial);
    if (!stream) streams.set(serial, (stream = { headers: [], partial: [] }));
    if (!(b[at + 5] & 1)) stream.partial = []; // not a continuation: a packet left open was lost
    for (const size of table) {
      if (body + size > b.length) break; // a page cut short: the packets it holds whole are played
      stream.partial.push(b.subarray(body, body + size));
      body += size;
      if (size === 255) continue;
      const packet = stream.partial.length === 1 ? stream.partial[0] : Buffer.concat(stream.partial);
      stream.partial = [];
      if (stream.ignored) continue;
      if (stream.clock) seconds += stream.clock(packet);
      else identify(stream, packet);
    }
    // The next page is looked for from this one's start, not where its segment table says it ends:
    // a page whose length is wrong (which decoders checking its CRC drop) hides none after it.
    at += 4;
  }
  if (![...streams.values()].some((s) => s.clock)) throw indeterminate("the Ogg file has no audio stream");
  return seconds;
}
