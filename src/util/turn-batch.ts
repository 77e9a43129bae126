/**
 * What reaches one stream in one turn of the event loop, sent on as one message: audio frames
 * for an STT upstream, text tokens for a TTS upstream. Bun runs the microtask queue after every
 * incoming frame, so a burst can only be gathered until the loop's next turn (`setImmediate`); a
 * lone piece goes on as it is, without a copy. A sender that streams in real time sends one
 * piece per turn and sees no change; a burst costs one upstream send per turn instead of one per
 * piece. A message never grows past `maxSize` (providers cap a message: AssemblyAI at 1 s of audio).
 */
export class TurnBatch<T extends { length: number }> {
  private parts: T[] = [];
  private size = 0;
  private scheduled: ReturnType<typeof setImmediate> | undefined;

  constructor(
    private readonly send: (message: T) => void,
    private readonly join: (parts: T[], size: number) => T,
    private readonly maxSize: number,
  ) {}

  push(piece: T): void {
    if (this.size + piece.length > this.maxSize) this.flush();
    this.parts.push(piece);
    this.size += piece.length;
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /** The size of what is gathered and not yet sent. */
  get gathered(): number {
    return this.size;
  }

  /** Sends what is gathered now: before anything that must follow it (a commit, a flush). */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (!this.parts.length) return;
    const message = this.parts.length === 1 ? this.parts[0]! : this.join(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    this.send(message);
  }

  /** The stream is gone: what is gathered is not sent. */
  drop(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.parts = [];
    this.size = 0;
  }
}

/** Audio frames joined into one buffer. */
export const joinAudio = (parts: Uint8Array[], size: number): Uint8Array => Buffer.concat(parts, size);

/** Text pieces joined into one string. */
export const joinText = (parts: string[]): string => parts.join("");
