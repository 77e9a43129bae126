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

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {
    this.arm();
  }

  touch(): void {
    this.timer?.refresh();
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
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.stopped) this.onIdle();
    }, this.ms);
  }
}
