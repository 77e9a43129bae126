// Client input admitted in arrival order, each item only once the request's credit hold covers
// the usage it brings: without a database round trip while the current block lasts (the meter
// answers `true` at once), waiting in order while the hold grows, and refusing the rest when the
// balance cannot cover more. TTS text is counted in characters, STT audio in seconds.

export interface CreditGateRules<T> {
  /** The request's usage once `item` is admitted (cumulative), or undefined when it costs nothing. Asked once per item, in order. */
  usageWith(item: T): number | undefined;
  /** The meter's answer for holding credits up to `units`. */
  cover(units: number): boolean | Promise<boolean>;
  /** The item is paid for: pass it on. */
  admit(item: T, units: number | undefined): void;
  /** The balance cannot cover the next item: the items waiting are dropped unbilled. */
  exhausted(): void;
  failed(err: unknown): void;
}

export class CreditGate<T> {
  private inbox: T[] = [];
  /** The head item's usage, once asked. */
  private headUsage: number | undefined;
  private headAsked = false;
  private covered = 0;
  private covering = false;
  private open = false;
  private stopped = false;

  constructor(private readonly rules: CreditGateRules<T>) {}

  push(item: T): void {
    if (this.stopped) return;
    this.inbox.push(item);
    this.drain();
  }

  /** Admission is known: items start going through. */
  start(): void {
    this.open = true;
    this.drain();
  }

  /**
   * The session moved to another binding (a fallback): the next item is covered on it afresh,
   * even when it adds no usage, since a dearer binding needs a larger hold for the same usage.
   */
  coverAfresh(): void {
    this.covered = 0;
  }

  /** Nothing more goes through (the session ended). */
  stop(): void {
    this.stopped = true;
    this.inbox = [];
  }

  private drain(): void {
    while (this.open && !this.covering && !this.stopped && this.inbox.length) {
      if (!this.headAsked) {
        this.headUsage = this.rules.usageWith(this.inbox[0]);
        this.headAsked = true;
      }
      const units = this.headUsage;
      if (units !== undefined && units > this.covered) {
        const covered = this.rules.cover(units);
        if (covered === false) return this.exhaust();
        if (covered !== true) return this.await(covered, units);
        this.covered = units;
      }
      this.headAsked = false;
      this.rules.admit(this.inbox.shift()!, units);
    }
  }

  private await(covered: Promise<boolean>, units: number): void {
    this.covering = true;
    covered.then(
      (ok) => {
        this.covering = false;
        if (this.stopped) return;
        if (!ok) return this.exhaust();
        this.covered = Math.max(this.covered, units);
        this.drain();
      },
      (err) => {
        this.covering = false;
        if (!this.stopped) this.rules.failed(err);
      },
    );
  }

  private exhaust(): void {
    this.stop();
    this.rules.exhausted();
  }
}
