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
