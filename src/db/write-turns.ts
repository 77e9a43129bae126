// SQLite has one writer: the worker's write transactions and the main connection's (Drizzle, off the
// hot path) take turns here, so that a main-thread BEGIN never waits on the worker's lock and
// blocks the event loop (sqlite-worker.ts, sql.ts).

/** One writer at a time, in arrival order. */
export class WriteTurns {
  private tail: Promise<void> = Promise.resolve();

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let done!: () => void;
    this.tail = new Promise<void>((resolve) => (done = resolve));
    await previous;
    try {
      return await fn();
    } finally {
      done();
    }
  }
}
