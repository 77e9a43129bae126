import { Mp3Encoder } from "@breezystack/lamejs";

/** LAME hands out Int8Arrays; audio is bytes everywhere else. */
const asBytes = (x: ArrayBufferView) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);

/** Streaming MP3 (LAME) for 16-bit mono PCM; frames come out as soon as LAME has them. */
export class Mp3StreamEncoder {
  private readonly encoder: Mp3Encoder;
  private carry: Uint8Array | undefined;

  constructor(sampleRate: number, kbps = 64) {
    this.encoder = new Mp3Encoder(1, sampleRate, kbps);
  }

  encode(pcm: Uint8Array): Uint8Array {
    // Keep an odd trailing byte for the next call so samples never split.
    let bytes = pcm;
    if (this.carry) {
      bytes = new Uint8Array(this.carry.length + pcm.length);
      bytes.set(this.carry);
      bytes.set(pcm, this.carry.length);
      this.carry = undefined;
    }
    const even = bytes.length & ~1;
    if (even < bytes.length) this.carry = bytes.slice(even);
    const aligned = bytes.byteOffset % 2 === 0 ? bytes : bytes.slice();
    return asBytes(this.encoder.encodeBuffer(new Int16Array(aligned.buffer, aligned.byteOffset, even / 2)));
  }

  flush(): Uint8Array {
    return asBytes(this.encoder.flush());
  }
}
