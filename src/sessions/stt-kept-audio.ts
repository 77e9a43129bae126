import type { SttCommand } from "./stt-events.ts";

// What a streaming STT session would have to say again to another provider if its provider failed
// now: the caller's audio since the transcripts it has settled (a final transcript, a commit or a
// clear ends what the provider still owes), and the client's commands not yet answered, in the
// order they came. Bounded: past `KEPT_AUDIO_SECONDS` of audio the oldest is let go (its words are
// lost should the provider fail before it settles them). See docs/routing.md.

/** The most audio kept for a replay. */
export const KEPT_AUDIO_SECONDS = 30;

type Kept = { audio: Uint8Array } | { command: SttCommand };

export class KeptAudio {
  private items: Kept[] = [];
  /** Bytes of audio kept, and the caller's byte offset of the first of them. */
  bytes = 0;
  private startByte = 0;
  /** Bytes let go because they were past the bound, not settled. */
  droppedBytes = 0;
  private readonly maxBytes: number;

  constructor(
    private readonly bytesPerSecond: number,
    /** Bytes of one sample frame (all channels): a replay starts on one. */
    private readonly frameBytes: number,
  ) {
    this.maxBytes = Math.floor((KEPT_AUDIO_SECONDS * bytesPerSecond) / frameBytes) * frameBytes;
  }

  /** A frame as it went to the provider (copied: a stream may take the buffer it is given). */
  audio(frame: Uint8Array): void {
    this.items.push({ audio: frame.slice() });
    this.bytes += frame.byteLength;
    if (this.bytes > this.maxBytes) {
      const over = this.bytes - this.maxBytes;
      this.droppedBytes += over;
      this.drop(over);
    }
  }

  command(command: SttCommand): void {
    this.items.push({ command });
  }

  /** The provider will say nothing more of the audio before `ms` (the caller's clock). */
  settled(ms: number): void {
    const byte = Math.floor((ms * this.bytesPerSecond) / 1000 / this.frameBytes) * this.frameBytes;
    if (byte > this.startByte) this.drop(Math.min(byte - this.startByte, this.bytes));
  }

  /** The provider answered the oldest commit or clear still waiting (providers answer them in order). */
  answered(): void {
    const i = this.items.findIndex((item) => "command" in item && item.command.type !== "close");
    if (i >= 0) this.items.splice(i, 1);
  }

  /** Where the kept audio starts on the caller's clock, in ms: a replay's times are shifted by it. */
  get startMs(): number {
    return (this.startByte * 1000) / this.bytesPerSecond;
  }

  /** What a replay says, in order. */
  replay(): (Uint8Array | SttCommand)[] {
    return this.items.map((item) => ("audio" in item ? item.audio.slice() : item.command));
  }

  /** Lets go of the oldest `n` bytes of audio; commands keep their place ahead of what is left. */
  private drop(n: number): void {
    this.startByte += n;
    this.bytes -= n;
    const ahead: Kept[] = [];
    let i = 0;
    for (; i < this.items.length && n > 0; i++) {
      const item = this.items[i]!;
      if (!("audio" in item)) ahead.push(item);
      else if (item.audio.byteLength <= n) n -= item.audio.byteLength;
      else {
        this.items[i] = { audio: item.audio.subarray(n) };
        break;
      }
    }
    this.items = [...ahead, ...this.items.slice(i)];
  }
}
