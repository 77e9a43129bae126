import { mpegFrame } from "./duration/mpeg.ts";

/** The length of a stream of audio chunks, counted as they go by. */
export interface AudioClock {
  /** Seconds of audio in the stream so far, `chunk` included. */
  advance(chunk: Uint8Array): number;
}

/** Raw PCM or G.711: `bytesPerSample` bytes per sample at `rate`. */
export function sampleClock(rate: number, bytesPerSample: number): AudioClock {
  let bytes = 0;
  return { advance: (chunk) => (bytes += chunk.byteLength) / bytesPerSample / rate };
}

/**
 * MP3 frames, each counted once it is whole (a frame may be split across chunks; the bytes before
 * a header, such as a tag, count for nothing).
 */
export function mp3Clock(): AudioClock {
  let rest = new Uint8Array(0);
  let seconds = 0;
  return {
    advance(chunk) {
      const b = rest.byteLength ? Buffer.concat([rest, chunk]) : chunk;
      let at = 0;
      while (at + 4 <= b.byteLength) {
        const frame = mpegFrame(b, at);
        if (!frame?.length) {
          at++;
          continue;
        }
        if (at + frame.length > b.byteLength) break;
        seconds += frame.samples / frame.rate;
        at += frame.length;
      }
      rest = b.slice(at);
      return seconds;
    },
  };
}
