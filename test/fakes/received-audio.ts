import { createHash } from "node:crypto";

// What a streaming STT fake received of one session's audio, so that a test can tell the audio
// reached the provider whole and in order: its bytes counted and hashed (SHA-256) in the order
// they arrived, compared with `digestOf` the audio the client sent (or the audio the router is
// documented to send for it). And whether any of it was sound: a fake whose transcript is a fixed
// sentence answers it only for audio that was not digital silence.

/** How the fake's wire carries samples: 16-bit little-endian PCM, or G.711 µ-law bytes. */
export type WireEncoding = "pcm_s16le" | "mulaw";

export interface AudioDigest {
  bytes: number;
  sha256: string;
}

/** µ-law's two codes for a zero sample. */
const MULAW_ZERO = new Set([0xff, 0x7f]);

/** Whether the bytes hold a sample other than zero (byte by byte, so a sample split between two chunks is judged all the same). */
export function hasSound(chunk: Uint8Array, encoding: WireEncoding = "pcm_s16le"): boolean {
  return encoding === "mulaw" ? chunk.some((b) => !MULAW_ZERO.has(b)) : chunk.some((b) => b !== 0);
}

export class ReceivedAudio {
  private readonly hash = createHash("sha256");
  private count = 0;
  private sound = false;

  constructor(private readonly encoding: WireEncoding = "pcm_s16le") {}

  /** Takes the next chunk as it arrived; whether it held any sound. */
  add(chunk: Uint8Array): boolean {
    this.hash.update(chunk);
    this.count += chunk.byteLength;
    const sound = hasSound(chunk, this.encoding);
    this.sound ||= sound;
    return sound;
  }

  /** Whether any sample so far was not silence. */
  get heardSound(): boolean {
    return this.sound;
  }

  digest(): AudioDigest {
    return { bytes: this.count, sha256: this.hash.copy().digest("hex") };
  }
}

/** The digest of these chunks one after another: what a fake that received them intact and in order reports. */
export function digestOf(chunks: Iterable<Uint8Array>): AudioDigest {
  const hash = createHash("sha256");
  let bytes = 0;
  for (const chunk of chunks) {
    hash.update(chunk);
    bytes += chunk.byteLength;
  }
  return { bytes, sha256: hash.digest("hex") };
}

/** What a file transcription fake received of one uploaded file. */
export interface ReceivedFile {
  /** The file's bytes, whole, as they reached the fake: compare with `digestOf([what the client uploaded])`. */
  digest: AudioDigest;
  /** A WAV whose samples are all digital silence: a fake whose transcript is a fixed sentence answers nothing for it. */
  silent: boolean;
}

/** WAV `fmt ` codes whose zero samples are zero bytes (integer PCM of 16 bits or more, float), and µ-law's. */
const ZERO_BYTE_FORMATS = new Set([1, 3]);
const MULAW_FORMAT = 7;

/**
 * The file's digest, and whether it is digital silence. Only WAV is decoded (cheap: its samples are
 * its data chunks' bytes); a compressed container is never judged silent, so such a fake keeps its
 * fixed sentence there, and the digest alone proves which bytes arrived.
 */
export function receivedFile(file: Uint8Array): ReceivedFile {
  return { digest: digestOf([file]), silent: wavIsSilent(file) };
}

function wavIsSilent(file: Uint8Array): boolean {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const tag = (at: number) => String.fromCharCode(...file.subarray(at, at + 4));
  if (file.byteLength < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") return false;
  let encoding: WireEncoding | undefined;
  let samples = 0;
  for (let at = 12; at + 8 <= file.byteLength; at += 8 + view.getUint32(at + 4, true) + (view.getUint32(at + 4, true) % 2)) {
    const body = file.subarray(at + 8, at + 8 + view.getUint32(at + 4, true));
    if (tag(at) === "fmt " && body.byteLength >= 16) {
      const format = view.getUint16(at + 8, true);
      const bits = view.getUint16(at + 22, true);
      encoding = format === MULAW_FORMAT ? "mulaw" : ZERO_BYTE_FORMATS.has(format) && bits >= 16 ? "pcm_s16le" : undefined;
      if (!encoding) return false;
    } else if (tag(at) === "data") {
      if (!encoding || hasSound(body, encoding)) return false;
      samples += body.byteLength;
    }
  }
  return samples > 0;
}
