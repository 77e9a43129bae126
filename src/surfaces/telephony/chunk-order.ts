// Caller audio taken in the order of its frames' `chunk` numbers: Telnyx says its media frames may
// arrive out of order and that `media.chunk` orders them. A frame ahead of the next expected chunk
// waits, up to WINDOW frames (100 ms); a gap still open when the window is full is given up (the
// frame never came) and the next held chunk goes on. A frame older than one already taken is
// dropped: its moment in the audio has passed. Both carriers number from 1, so a stream whose
// first frame is late waits for it too. Frames without a chunk number pass as they come.

export const WINDOW = 5;

export class ChunkOrder {
  private next = 1;
  private taken = false;
  private readonly held = new Map<number, Uint8Array>();

  constructor(private readonly deliver: (payload: Uint8Array) => void) {}

  take(payload: Uint8Array, chunk: number | undefined): void {
    if (chunk === undefined) return this.deliver(payload);
    if (chunk === this.next || (!this.taken && chunk < this.next)) {
      this.taken = true;
      this.deliver(payload);
      this.next = chunk + 1;
      return this.release();
    }
    if (chunk < this.next) return;
    this.held.set(chunk, payload);
    if (this.held.size >= WINDOW) {
      this.next = Math.min(...this.held.keys());
      this.release();
    }
  }

  /** The held frames that follow on from the last one taken. */
  private release(): void {
    for (let payload = this.held.get(this.next); payload; payload = this.held.get(this.next)) {
      this.held.delete(this.next);
      this.taken = true;
      this.deliver(payload);
      this.next++;
    }
  }
}
