/** Frames remembered: at 20 ms a frame, the last ten seconds of audio or more. */
const REMEMBERED = 512;

/**
 * When each stretch of a session's audio arrived from the client, so that a transcript can be
 * timed from the arrival of the audio it ends with (the STT event latency metric). A ring of the
 * latest frames: fixed memory, however long the session.
 */
export class AudioArrivals {
  /** Audio time at the end of each remembered frame, and when that frame arrived. */
  private readonly endMs = new Float64Array(REMEMBERED);
  private readonly at = new Float64Array(REMEMBERED);
  private count = 0;
  private bytes = 0;
  /** Audio before this time is in frames no longer remembered. */
  private forgottenMs = 0;

  constructor(private readonly bytesPerSecond: number) {}

  /** A frame of `byteLength` bytes arrived now. */
  arrived(byteLength: number, now = performance.now()): void {
    const i = this.count++ % REMEMBERED;
    if (this.count > REMEMBERED) this.forgottenMs = this.endMs[i]!;
    this.bytes += byteLength;
    this.endMs[i] = (this.bytes / this.bytesPerSecond) * 1000;
    this.at[i] = now;
  }

  /** When the frame holding audio time `ms` arrived; undefined when it is forgotten or has not arrived. */
  arrivalOf(ms: number): number | undefined {
    if (this.count === 0 || ms < this.forgottenMs || ms > this.endMs[(this.count - 1) % REMEMBERED]!) return undefined;
    let n = this.count - 1;
    const oldest = Math.max(0, this.count - REMEMBERED);
    while (n > oldest && this.endMs[(n - 1) % REMEMBERED]! >= ms) n--;
    return this.at[n % REMEMBERED];
  }
}
