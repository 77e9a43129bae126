/**
 * Work waiting in a worker, taken round-robin across sessions: each session with work waiting
 * gets one piece per round, in its own order, so that one session's many pieces never hold back
 * another's next one. What a session sends after a piece that is not work itself (its end) goes
 * with that piece, in the same turn.
 */
export class Turns<M extends { sid: number }> {
  private readonly waiting = new Map<number, M[]>();
  /** The sessions with work waiting, in the order they take their turns. */
  private readonly round: number[] = [];

  constructor(private readonly isWork: (msg: M) => boolean) {}

  /** Whether the session has anything waiting (a message of its own then waits behind it). */
  has(sid: number): boolean {
    return this.waiting.has(sid);
  }

  add(msg: M): void {
    const queue = this.waiting.get(msg.sid);
    if (queue) return void queue.push(msg);
    this.waiting.set(msg.sid, [msg]);
    this.round.push(msg.sid);
  }

  /** Forgets what the session has waiting. */
  drop(sid: number): void {
    this.waiting.delete(sid);
  }

  /** The next turn: a session's next piece of work and what follows it up to its next one. */
  next(): M[] | undefined {
    for (let sid = this.round.shift(); sid !== undefined; sid = this.round.shift()) {
      const queue = this.waiting.get(sid);
      if (!queue) continue; // dropped
      const turn = [queue.shift()!];
      while (queue.length && !this.isWork(queue[0])) turn.push(queue.shift()!);
      if (queue.length) this.round.push(sid);
      else this.waiting.delete(sid);
      return turn;
    }
    return undefined;
  }
}

/**
 * Turns in two lanes: the interactive lane's turns go before the bulk lane's, each lane
 * round-robin within itself. So that bulk never starves, it takes one turn after every `burst`
 * turns taken from the interactive lane.
 */
export class LanedTurns<M extends { sid: number }> {
  private readonly interactive: Turns<M>;
  private readonly bulk: Turns<M>;
  /** Interactive turns taken since the bulk lane's last one. */
  private run = 0;

  constructor(
    isWork: (msg: M) => boolean,
    private readonly burst: number,
  ) {
    this.interactive = new Turns(isWork);
    this.bulk = new Turns(isWork);
  }

  has(sid: number): boolean {
    return this.interactive.has(sid) || this.bulk.has(sid);
  }

  add(msg: M, interactive: boolean): void {
    (interactive ? this.interactive : this.bulk).add(msg);
  }

  drop(sid: number): void {
    this.interactive.drop(sid);
    this.bulk.drop(sid);
  }

  next(): M[] | undefined {
    if (this.run < this.burst) {
      const turn = this.interactive.next();
      if (turn) {
        this.run++;
        return turn;
      }
    }
    this.run = 0;
    return this.bulk.next() ?? this.interactive.next();
  }
}
