/**
 * Concurrent asks for the same key share one answer while it is being fetched: a burst of
 * sessions of one key or tenant reads the database once. Nothing is kept after the answer comes;
 * `forget` makes the next ask fetch afresh (the data changed since the fetch under way began).
 */
export class SingleFlight<K, V> {
  private readonly inFlight = new Map<K, Promise<V>>();

  get(key: K, fetch: () => Promise<V>): Promise<V> {
    const running = this.inFlight.get(key);
    if (running) return running;
    const answer = fetch();
    this.inFlight.set(key, answer);
    const done = () => {
      if (this.inFlight.get(key) === answer) this.inFlight.delete(key);
    };
    answer.then(done, done);
    return answer;
  }

  forget(key: K): void {
    this.inFlight.delete(key);
  }
}
