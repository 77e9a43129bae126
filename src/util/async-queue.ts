/** A single-consumer async queue: producers push, one `for await` drains; `fail` ends it with an error. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiter: (() => void) | undefined;
  private room: (() => void) | undefined;
  private ended = false;
  private error: unknown;

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
    const room = this.room;
    this.room = undefined;
    room?.();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.error = error;
    this.end();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  /** Resolves once fewer than `max` items wait to be read, or the queue has ended: a producer's backpressure. */
  async roomFor(max: number): Promise<void> {
    while (this.items.length >= max && !this.ended) await new Promise<void>((resolve) => (this.room = resolve));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.items.length) {
        const item = this.items.shift()!;
        const room = this.room;
        this.room = undefined;
        room?.();
        yield item;
      } else if (this.ended) {
        if (this.error !== undefined) throw this.error;
        return;
      } else {
        await new Promise<void>((resolve) => (this.waiter = resolve));
      }
    }
  }
}
