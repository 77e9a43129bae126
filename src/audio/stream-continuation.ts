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
