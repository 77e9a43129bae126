import { ApiError } from "../errors.ts";
import { fourcc } from "./duration/bits.ts";
import { flacSeconds } from "./duration/flac.ts";
import { indeterminate } from "./duration/indeterminate.ts";
import { matroskaSeconds } from "./duration/matroska.ts";
import { adtsFrame, afterId3, mpegFrame, mpegSeconds, streamStartsAt, type Frame } from "./duration/mpeg.ts";
import { mp4Seconds } from "./duration/mp4.ts";
import { oggSeconds } from "./duration/ogg.ts";
import { wavSeconds } from "./duration/wav.ts";

/** Longest file accepted: a day. A duration beyond it is a broken file, not audio. */
const MAX_SECONDS = 24 * 3600;
/** How far into a file without a signature an MPEG or ADTS stream is looked for. */
const SEARCH_BYTES = 64 * 1024;

export interface Probe {
  seconds: number;
  /** `WAVE`, `MPEG`, `ADTS/MPEG-4`, `FLAC`, `Ogg`, `EBML/webm`, `M4A/isom/iso2` (an MP4's brands), … */
  container: string;
}

interface Container {
  name: string;
  seconds: (bytes: Uint8Array) => number;
}

const frames = (frameAt: (b: Uint8Array, at: number) => Frame | undefined) => (b: Uint8Array) => mpegSeconds(b, frameAt);

/** The container, by the file's own bytes: a declared type can be wrong, and is not asked. */
function sniff(b: Uint8Array): Container | undefined {
  const audio = afterId3(b);
  if (fourcc(b, 0) === "RIFF" && fourcc(b, 8) === "WAVE") return { name: "WAVE", seconds: wavSeconds };
  if (fourcc(b, audio) === "fLaC") return { name: "FLAC", seconds: flacSeconds };
  if (fourcc(b, 0) === "OggS") return { name: "Ogg", seconds: oggSeconds };
  if (b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3) return { name: `EBML/${ebmlDocType(b)}`, seconds: matroskaSeconds };
  if (fourcc(b, 4) === "ftyp") return { name: mp4Brands(b), seconds: mp4Seconds };
  // Raw MPEG audio or ADTS: tagged, or a run of frames at the start (or, after junk, a longer run).
  const raw = (at: number, run: number): Container | undefined =>
    streamStartsAt(b, at, mpegFrame, run)
      ? { name: "MPEG", seconds: frames(mpegFrame) }
      : streamStartsAt(b, at, adtsFrame, run)
        ? { name: `ADTS/MPEG-${b[at + 1] & 0x08 ? 2 : 4}`, seconds: frames(adtsFrame) }
        : undefined;
  let found = raw(audio, audio > 0 ? 1 : 2);
  for (let at = b.indexOf(0xff); !found && at >= 0 && at < SEARCH_BYTES; at = b.indexOf(0xff, at + 1)) found = raw(at, 3);
  return found;
}

/** The DocType in an EBML header ("webm", "matroska"). */
function ebmlDocType(b: Uint8Array): string {
  const at = b.subarray(0, 64).findIndex((x, i) => x === 0x42 && b[i + 1] === 0x82);
  if (at < 0) return "unknown";
  return new TextDecoder().decode(b.subarray(at + 3, at + 3 + (b[at + 2] & 0x7f))).replace(/\0+$/, ""); // a one-byte size, as headers write it
}

/** An MP4's brands, major and compatible, distinct, joined by "/": its container's name. */
function mp4Brands(b: Uint8Array): string {
  const end = Math.min(new DataView(b.buffer, b.byteOffset).getUint32(0), b.length);
  const brands = new Set<string>();
  for (let at = 8; at + 4 <= end; at += 4) brands.add(fourcc(b, at).replace(/\W/g, ""));
  brands.delete("");
  return [...brands].join("/");
}

/**
 * How long a file's audio plays, measured from the audio itself: every frame, packet or sample a
 * decoder would play, each by its own header (see src/audio/duration/). Duration fields, sample
 * counts and sizes that headers claim are not believed; where they disagree with the format or the
 * data, the data decides or the file is refused. Billing depends on it, so an unknown container, a
 * codec that cannot be measured, or an absurd length is 422 `indeterminate_audio_duration`.
 */
export function probeDuration(bytes: Uint8Array): Probe {
  const container = sniff(bytes);
  if (!container) throw indeterminate("the container is not one that can be measured (WAV, MP3, AAC, FLAC, Ogg, WebM/Matroska, MP4/M4A)");
  let seconds: number;
  try {
    seconds = container.seconds(bytes);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw indeterminate(`the ${container.name} file is malformed (${(err as Error).message})`); // a read past its end
  }
  if (!Number.isFinite(seconds) || seconds <= 0) throw indeterminate("the file holds no audio");
  if (seconds > MAX_SECONDS) throw indeterminate(`${seconds} s is not a plausible recording`);
  // To the microsecond: sums of frame lengths carry float dust that could tip a whole second up.
  return { seconds: Math.round(seconds * 1e6) / 1e6, container: container.name };
}
