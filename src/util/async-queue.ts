/** A single-consumer async queue: producers push, one `for await` drains; `fail` ends it with an error. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiter: (() => void) | undefined;
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

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.items.length) {
        yield this.items.shift()!;
      } else if (this.ended) {
        if (this.error !== undefined) throw this.error;
        return;
      } else {
        await new Promise<void>((resolve) => (this.waiter = resolve));
      }
    }
  }
}
