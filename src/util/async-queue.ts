/** How a queue weighs what it holds, and the most it may hold unread. */
export interface QueueBounds<T> {
  /** An item's weight (e.g. its bytes); items weigh 1 without bounds. */
  size(item: T): number;
  /** A push that takes the unread weight past this fails the queue with `overflow()` instead. */
  cap: number;
  overflow(): unknown;
}

/** A single-consumer async queue: producers push, one `for await` drains; `fail` ends it with an error. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private weight = 0;
  /**
   * The consumer's read that found nothing: the next push settles it with its item directly (one
   * promise per item read, the per-chunk path of every provider stream, instead of a wake-up and a re-read).
   */
  private reader: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  private room: (() => void) | undefined;
  /**
   * While the reader waits on an empty queue, a pushed item is first offered here, synchronously:
   * true when it was taken at once, and the read goes on waiting (the consumer's per-item path with
   * no promise at all). What it throws fails the queue, as if the consumer had thrown it.
   */
  offer: ((item: T) => boolean) | undefined;
  private ended = false;
  private error: unknown;

  constructor(private readonly bounds?: QueueBounds<T>) {}

  /** The weight of the items pushed and not yet read. */
  get unread(): number {
    return this.weight;
  }

  push(item: T): void {
    if (this.ended) return;
    if (this.reader && this.offer) {
      try {
        if (this.offer(item)) return;
      } catch (err) {
        return this.fail(err);
      }
    }
    this.items.push(item);
    this.weight += this.sizeOf(item);
    if (this.bounds && this.weight > this.bounds.cap) return this.fail(this.bounds.overflow());
    const reader = this.reader;
    if (!reader) return;
    this.reader = undefined;
    reader.resolve(this.take());
  }

  end(): void {
    this.ended = true;
    const reader = this.reader;
    this.reader = undefined;
    // Items pushed before the end are read before it (an overflowing push's item too).
    if (reader) this.items.length ? reader.resolve(this.take()) : this.settleEnded(reader);
    const room = this.room;
    this.room = undefined;
    room?.();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.error = error;
    this.end();
  }

  private sizeOf(item: T): number {
    return this.bounds ? this.bounds.size(item) : 1;
  }

  /** Undefined while less than `max` waits to be read (or the queue has ended), else resolves once that holds: a producer's backpressure. */
  roomFor(max: number): Promise<void> | undefined {
    return this.weight >= max && !this.ended ? this.roomLater(max) : undefined;
  }

  private async roomLater(max: number): Promise<void> {
    while (this.weight >= max && !this.ended) await new Promise<void>((resolve) => (this.room = resolve));
  }

  // A plain iterator rather than an async generator: an item read costs no generator step.
  [Symbol.asyncIterator](): AsyncIterator<T> {
    return { next: () => this.next() };
  }

  private next(): Promise<IteratorResult<T>> {
    if (this.items.length) return Promise.resolve(this.take());
    return new Promise((resolve, reject) => {
      if (this.ended) this.settleEnded({ resolve, reject });
      else this.reader = { resolve, reject };
    });
  }

  /** The first item, read: its weight no longer counts, and a producer waiting for room may go on. */
  private take(): IteratorResult<T> {
    const item = this.items.shift()!;
    this.weight -= this.sizeOf(item);
    const room = this.room;
    this.room = undefined;
    room?.();
    return { done: false, value: item };
  }

  private settleEnded({ resolve, reject }: NonNullable<AsyncQueue<T>["reader"]>): void {
    if (this.error !== undefined) reject(this.error);
    else resolve({ done: true, value: undefined });
  }
}
