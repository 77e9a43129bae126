import type { SttCommand } from "./stt-events.ts";

// What a streaming STT session would have to say again to another provider if its provider failed
// now: the caller's audio since the transcripts it has settled (a final transcript, a commit or a
// clear ends what the provider still owes), and the client's commands not yet answered, in the
// order they came. Bounded: past `KEPT_AUDIO_SECONDS` of audio the oldest is let go (its words are
// lost should the provider fail before it settles them). See docs/routing.md.
//
// The audio lives in one byte ring (a frame costs one copy into it; letting go of the oldest bytes
// moves an index), with where each frame ended, so a replay gives the frames as they came; a
// command is noted at the byte offset it came after. The ring grows by doubling up to the bound,
// so a session whose provider settles its audio promptly holds a few seconds, not thirty.

/** The most audio kept for a replay. */
export const KEPT_AUDIO_SECONDS = 30;
/** The ring's first size, in seconds of audio. */
const FIRST_RING_SECONDS = 2;

/** A ring of the caller's byte offsets where kept frames end, oldest first. */
class FrameEnds {
  private ends = new Float64Array(64);
  private head = 0;
  count = 0;

  push(end: number): void {
    if (this.count === this.ends.length) {
      const grown = new Float64Array(this.ends.length * 2);
      for (let k = 0; k < this.count; k++) grown[k] = this.at(k);
      this.ends = grown;
      this.head = 0;
    }
    this.ends[(this.head + this.count++) % this.ends.length] = end;
  }

  /** The `k`th oldest end. */
  at(k: number): number {
    return this.ends[(this.head + k) % this.ends.length]!;
  }

  /** Forgets the frames that end at or before `byte`. */
  dropTo(byte: number): void {
    while (this.count && this.ends[this.head]! <= byte) {
      this.head = (this.head + 1) % this.ends.length;
      this.count--;
    }
  }
}

export class KeptAudio {
  /** The kept audio, from `head` on, wrapping at the ring's end. */
  private ring = new Uint8Array(0);
  private head = 0;
  private ends = new FrameEnds();
  /** Unanswered commands, each at the caller's byte offset it came after, in order. */
  private commands: { at: number; command: SttCommand }[] = [];
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
    const over = this.bytes + frame.byteLength - this.maxBytes;
    if (over > 0) {
      this.droppedBytes += over;
      const ofFrame = Math.max(0, over - this.bytes);
      this.drop(over - ofFrame);
      this.startByte += ofFrame; // a frame longer than the bound: only its end is kept
      frame = frame.subarray(ofFrame);
    }
    this.write(frame);
    this.ends.push(this.startByte + this.bytes);
  }

  command(command: SttCommand): void {
    this.commands.push({ at: this.startByte + this.bytes, command });
  }

  /** The provider will say nothing more of the audio before `ms` (the caller's clock). */
  settled(ms: number): void {
    const byte = Math.floor((ms * this.bytesPerSecond) / 1000 / this.frameBytes) * this.frameBytes;
    if (byte > this.startByte) this.drop(Math.min(byte - this.startByte, this.bytes));
  }

  /** The provider answered the oldest commit or clear still waiting (providers answer them in order). */
  answered(): void {
    const i = this.commands.findIndex((c) => c.command.type !== "close");
    if (i >= 0) this.commands.splice(i, 1);
  }

  /** Where the kept audio starts on the caller's clock, in ms: a replay's times are shifted by it. */
  get startMs(): number {
    return (this.startByte * 1000) / this.bytesPerSecond;
  }

  /** What a replay says, in order: the frames as they came (the oldest cut where the kept audio starts), commands where they came; those whose audio before them was let go come first. */
  replay(): (Uint8Array | SttCommand)[] {
    const items: (Uint8Array | SttCommand)[] = [];
    let c = 0;
    let from = this.startByte;
    for (let k = 0; k < this.ends.count; k++) {
      const end = this.ends.at(k);
      while (c < this.commands.length && this.commands[c]!.at <= from) items.push(this.commands[c++]!.command);
      items.push(this.copy(from, end));
      from = end;
    }
    while (c < this.commands.length) items.push(this.commands[c++]!.command);
    return items;
  }

  /** Nothing is kept any more (no provider could take the session over): the ring is let go. */
  clear(): void {
    this.drop(this.bytes);
    this.ring = new Uint8Array(0);
    this.head = 0;
    this.ends = new FrameEnds();
    this.commands = [];
  }

  /** Lets go of the oldest `n` bytes of audio; commands stay, ahead of what is left. */
  private drop(n: number): void {
    if (n <= 0) return;
    this.startByte += n;
    this.bytes -= n;
    this.head = (this.head + n) % this.ring.length;
    this.ends.dropTo(this.startByte);
  }

  /** Copies `frame` after the kept audio (it fits within the bound). */
  private write(frame: Uint8Array): void {
    const n = frame.byteLength;
    if (!n) return;
    if (this.bytes + n > this.ring.length) this.grow(this.bytes + n);
    const size = this.ring.length;
    const tail = (this.head + this.bytes) % size;
    const first = Math.min(n, size - tail);
    this.ring.set(first === n ? frame : frame.subarray(0, first), tail);
    if (first < n) this.ring.set(frame.subarray(first), 0);
    this.bytes += n;
  }

  private grow(needed: number): void {
    const size = Math.min(this.maxBytes, Math.max(needed, this.ring.length * 2, FIRST_RING_SECONDS * this.bytesPerSecond));
    const grown = new Uint8Array(size);
    if (this.bytes) grown.set(this.copy(this.startByte, this.startByte + this.bytes));
    this.ring = grown;
    this.head = 0;
  }

  /** A copy of the kept audio from byte `from` to `end` (the caller's offsets). */
  private copy(from: number, end: number): Uint8Array {
    const out = new Uint8Array(end - from);
    if (!out.length) return out;
    const size = this.ring.length;
    const at = (this.head + (from - this.startByte)) % size;
    const first = Math.min(out.length, size - at);
    out.set(this.ring.subarray(at, at + first));
    if (first < out.length) out.set(this.ring.subarray(0, out.length - first), first);
    return out;
  }
}
