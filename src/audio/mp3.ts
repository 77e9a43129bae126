import { Mp3Encoder } from "@breezystack/lamejs";
import { samplesOf } from "./bytes.ts";
import { SampleCarry } from "./sample-carry.ts";

/** LAME hands out Int8Arrays; audio is bytes everywhere else. */
const asBytes = (x: ArrayBufferView) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);

/** Streaming MP3 (LAME) for 16-bit mono PCM; frames come out as soon as LAME has them. */
export class Mp3StreamEncoder {
  private readonly encoder: Mp3Encoder;
  /** An odd trailing byte waits for the next call, so that samples never split. */
  private readonly carry = new SampleCarry();

  constructor(sampleRate: number, kbps = 64) {
    this.encoder = new Mp3Encoder(1, sampleRate, kbps);
  }

  encode(pcm: Uint8Array): Uint8Array {
    return asBytes(this.encoder.encodeBuffer(samplesOf(this.carry.wholeSamples(pcm))));
  }

  flush(): Uint8Array {
    return asBytes(this.encoder.flush());
  }
}
