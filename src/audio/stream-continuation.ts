import { afterId3, mpegFrame } from "./duration/mpeg.ts";
import { PcmDelivery } from "./pcm-delivery.ts";

// A stream of speech whose source changes midway (a TTS failover): the next source's audio goes on
// in the shape the listener was already given, so the stream stays one stream of one format.
// PCM continues at the stream's rate (resampled when the next source's differs); MP3 frames
// concatenate when both are MP3 at the same rate. Anything else cannot continue.

interface Shape {
  encoding: string;
  sampleRate: number;
}

/** Turns the next source's audio into the stream's shape. */
export interface Continuation {
  process(audio: Uint8Array): Uint8Array | Promise<Uint8Array>;
  release(): void;
}

const AS_IS: Continuation = { process: (audio) => audio, release: () => {} };

/** How `next` continues a stream begun as `stream`; undefined when it cannot. */
export function continuation(stream: Shape, next: Shape): Continuation | undefined {
  if (stream.encoding !== next.encoding) return undefined;
  if (next.sampleRate === stream.sampleRate) return AS_IS;
  if (next.encoding !== "pcm_s16le") return undefined;
  const delivery = PcmDelivery.for({ rate: stream.sampleRate }, next)!;
  return { process: (audio) => delivery.process(audio), release: () => delivery.release() };
}

/**
 * MP3 passed on in whole frames: a frame's start is held until the rest of it arrives, so a source
 * cut off in the middle of a frame leaves no broken frame in the stream (`drop` forgets it) and
 * its successor's frames follow whole ones. A tag before the first frame of the stream passes on;
 * a successor's is dropped (it would be a header in the middle). Bytes that are no frame where
 * one is due (a free-format stream) are passed on as they come, unaligned from then on.
 */
export class WholeMp3Frames {
  private carry = new Uint8Array(0);
  private aligned = true;
  private atStart = true;
  private first = true;

  take(chunk: Uint8Array): Uint8Array {
    if (!this.aligned) return chunk;
    let data = this.carry.byteLength ? Buffer.concat([this.carry, chunk]) : chunk;
    let at = 0;
    if (this.atStart) {
      const audio = afterId3(data);
      if (audio > data.byteLength || data.byteLength < 10) return this.keep(data, 0); // a tag not yet whole
      this.atStart = false;
      if (this.first) at = audio;
      else data = data.subarray(audio);
      this.first = false;
    }
    for (let frame = mpegFrame(data, at); frame?.length && at + frame.length <= data.byteLength; frame = mpegFrame(data, at)) at += frame.length;
    if (at < data.byteLength && data.byteLength - at >= 4 && !mpegFrame(data, at)?.length) {
      this.aligned = false;
      return this.keep(data, data.byteLength);
    }
    return this.keep(data, at);
  }

  /** What is held at the end of a source that ended well (its last frame, whole). */
  rest(): Uint8Array {
    return this.keep(this.carry, this.carry.byteLength);
  }

  /** The source failed: the start of a frame it never finished is not sent; the next source starts anew. */
  drop(): void {
    this.carry = new Uint8Array(0);
    this.atStart = true;
  }

  /** Passes on `data` up to `at`, holding the rest. */
  private keep(data: Uint8Array, at: number): Uint8Array {
    this.carry = data.slice(at);
    return data.subarray(0, at);
  }
}
