import type { IdleTimer } from "./idle-timer.ts";
import type { TtsPort } from "./tts-events.ts";

// Audio reaches the port in pieces of at most this: a socket holds one piece beyond the port's wait
// for drain, far under Bun's backpressureLimit (1 MiB) past which it would drop the events sent
// meanwhile. Under load an upstream's body is read in chunks of a sentence's audio (about 150 KB of
// 24 kHz PCM): each goes out as one frame and one write, as a plain relay sends it, not three.
export const MAX_AUDIO_PIECE = 256 * 1024;

/**
 * The audio a TTS session sends its client, counted: while the client is behind, the next piece
 * waits (and the provider's stream is not read, so it stops producing: audio-backlog.ts); that
 * wait is not idleness. Synchronous, with no promise, while the client keeps up: the per-chunk path.
 */
export class TtsAudioOut {
  bytes = 0;

  constructor(
    private readonly port: TtsPort,
    private readonly idle: IdleTimer,
    private readonly closed: () => boolean,
  ) {}

  send(audio: Uint8Array): void | Promise<void> {
    this.bytes += audio.byteLength;
    if (audio.byteLength > MAX_AUDIO_PIECE) return this.sendPieces(audio);
    if (!audio.byteLength || this.closed()) return;
    const backpressure = this.port.sendAudio(audio);
    if (backpressure) return this.idle.during(backpressure);
  }

  /** What `fn` sends (events and audio) goes out in one write, where the port can. */
  together<T>(fn: () => T): T {
    if (!this.port.together) return fn();
    let result!: T;
    this.port.together(() => {
      result = fn();
    });
    return result;
  }

  private async sendPieces(audio: Uint8Array): Promise<void> {
    for (let at = 0; at < audio.byteLength && !this.closed(); at += MAX_AUDIO_PIECE) {
      const backpressure = this.port.sendAudio(audio.subarray(at, at + MAX_AUDIO_PIECE));
      if (backpressure) await this.idle.during(backpressure);
    }
  }
}
