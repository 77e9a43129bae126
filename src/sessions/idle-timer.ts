/**
 * Ends a session nobody is using: `onIdle` runs once `ms` pass without a `touch` (a frame from
 * the client, or one sent to it). Work the client waits on (`during`: a provider connecting, audio
 * waiting for the client to read) never counts as idle; the countdown starts afresh after it.
 * `ms` 0 disables it.
 */
export class IdleTimer {
  private timer: Timer | undefined;
  private busy = 0;
  private stopped = false;
  /**
   * When the last touch was: a touch (every frame either way) only notes the time, and the timer,
   * when it fires, waits out the rest of the quiet period from there, rather than being pushed
   * back on each frame.
   */
  private touched = 0;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {
    this.arm();
  }

  touch(): void {
    this.touched = performance.now();
  }

  async during<T>(work: Promise<T>): Promise<T> {
    this.busy++;
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      return await work;
    } finally {
      this.busy--;
      this.arm();
    }
  }

  /** The session is ending, or its client said it has nothing more to send. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.stopped || this.busy || !this.ms) return;
    clearTimeout(this.timer);
    this.touched = performance.now();
    this.timer = setTimeout(this.expire, this.ms);
  }

  private readonly expire = () => {
    this.timer = undefined;
    if (this.stopped || this.busy) return;
    const quiet = performance.now() - this.touched;
    if (quiet < this.ms) this.timer = setTimeout(this.expire, this.ms - quiet);
    else this.onIdle();
  };
}
