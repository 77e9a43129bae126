/**
 * Audio frames that reach a session in one turn of the event loop, sent upstream as one message.
 * Bun runs the microtask queue after every incoming frame, so a burst can only be gathered until
 * the loop's next turn (`setImmediate`); a lone frame goes on as it is, without a copy. A client
 * streaming in real time sends one frame per turn and sees no change; one uploading faster than
 * real time costs one upstream send per turn instead of one per frame. A message never grows past
 * `maxBytes` (providers cap a message's audio: AssemblyAI at 1 s).
 */
export class AudioBatch {
  private parts: Uint8Array[] = [];
  private bytes = 0;
  private scheduled: ReturnType<typeof setImmediate> | undefined;

  constructor(
    private readonly send: (audio: Uint8Array) => void,
    private readonly maxBytes: number,
  ) {}

  push(audio: Uint8Array): void {
    if (this.bytes + audio.byteLength > this.maxBytes) this.flush();
    this.parts.push(audio);
    this.bytes += audio.byteLength;
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /** Sends what is gathered now: before a command, which must follow the audio sent ahead of it. */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    if (!this.parts.length) return;
    const audio = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.bytes);
    this.parts = [];
    this.bytes = 0;
    this.send(audio);
  }

  /** The stream is gone: what is gathered is not sent. */
  drop(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    this.parts = [];
    this.bytes = 0;
  }
}
