import { Worker } from "node:worker_threads";
import type { Logger } from "../log.ts";
import type { PoolLoad } from "../metrics.ts";

/** One session's line to the worker it was placed on. */
export interface Lane<In> {
  readonly sid: number;
  post(msg: In, transfer?: ArrayBuffer[]): void;
  /** Stops delivering this session's messages (the worker is told by the caller's own message). */
  close(): void;
  /** Once: stops delivering, and tells the worker with `msg` that the session is gone. */
  drop(msg: In): void;
}

interface Slot<Out> {
  worker: Worker;
  listeners: Map<number, (msg: Out) => void>;
  dead: boolean;
  /** Lanes holding one of this worker's seats. */
  seated: number;
}

/**
 * Seats: something scarce each worker has a few of (the local recognizer's decoders). A seated
 * lane holds one from open to drop; lanes beyond wait in a short queue, in order, then give up.
 */
export interface Seats {
  perWorker: number;
  /** Lanes that may wait for a seat at once; more are refused at once. */
  queue: number;
  /** The longest a lane waits for a seat. */
  waitMs: number;
}

/** No seat for a lane: the queue was full, or the wait ran out. */
export class NoSeat extends Error {}

interface SeatWaiter<In, Out> {
  listener: (msg: Out) => void;
  resolve: (lane: Lane<In>) => void;
  fail: (err: unknown) => void;
}

/**
 * A fixed pool of worker threads serving sessions. Each session sticks to the least-loaded
 * worker, so its messages stay in order and its state stays in one place. A worker that dies
 * fails only its own sessions (each gets `death(sid)`) and is replaced.
 */
export class WorkerPool<In, Out extends { sid: number }> {
  private readonly slots: Slot<Out>[] = [];
  private nextSid = 1;
  private closed = false;
  private deaths = 0;
  private readonly seatWaiters: SeatWaiter<In, Out>[] = [];

  constructor(
    private readonly url: URL,
    size: number,
    private readonly workerData: unknown,
    private readonly death: (sid: number) => Out,
    private readonly log?: Logger,
    /** Asks a worker to finish its work and exit; without it, closing terminates at once. */
    private readonly shutdown?: In,
    private readonly seats: Seats = { perWorker: 0, queue: 0, waitMs: 0 },
  ) {
    for (let i = 0; i < size; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot<Out> {
    const worker = new Worker(this.url, { workerData: this.workerData });
    const slot: Slot<Out> = { worker, listeners: new Map(), dead: false, seated: 0 };
    worker.on("message", (msg: Out) => slot.listeners.get(msg.sid)?.(msg));
    worker.on("error", (err) => this.log?.error({ err, worker: this.url.pathname }, "worker failed"));
    worker.on("exit", (code) => {
      if (this.closed) return;
      slot.dead = true;
      this.log?.error({ code, worker: this.url.pathname }, "worker exited; replacing it");
      for (const [sid, listener] of slot.listeners) listener(this.death(sid));
      slot.listeners.clear();
      // A worker that dies at once (a broken install) is not respawned in a tight loop.
      const delay = Math.min(30_000, 100 * 2 ** Math.min(this.deaths++, 8));
      setTimeout(() => {
        if (this.closed) return;
        this.slots[this.slots.indexOf(slot)] = this.spawn();
        this.seatFreed(); // the replacement's seats are all free
      }, delay).unref();
    });
    worker.unref();
    return slot;
  }

  /** Lanes open on the workers, and lanes waiting for a seat (the metrics' pool gauges). */
  load(): PoolLoad {
    return { lanes: this.slots.reduce((n, s) => n + s.listeners.size, 0), waiting: this.seatWaiters.length };
  }

  open(listener: (msg: Out) => void): Lane<In> {
    const sid = this.nextSid++;
    const live = this.slots.filter((s) => !s.dead);
    if (live.length === 0) {
      // Every worker is being replaced: the session fails at once instead of waiting on a dead one.
      queueMicrotask(() => listener(this.death(sid)));
      return { sid, post: () => {}, close: () => {}, drop: () => {} };
    }
    return this.place(
      live.reduce((a, b) => (b.listeners.size < a.listeners.size ? b : a)),
      sid,
      listener,
      false,
    );
  }

  /**
   * Opens a lane that holds a seat, on the least-loaded worker with one free. Without a free seat
   * it waits in the queue (leaving it when `signal` aborts); rejects with NoSeat when the queue is
   * full or the wait runs out.
   */
  openSeated(listener: (msg: Out) => void, signal?: AbortSignal): Promise<Lane<In>> {
    const lane = this.seatedLane(listener);
    if (lane) return Promise.resolve(lane);
    if (this.seatWaiters.length >= this.seats.queue) return Promise.reject(new NoSeat("every seat is taken and the queue is full"));
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.seatWaiters.splice(this.seatWaiters.indexOf(waiter), 1);
      };
      const waiter: SeatWaiter<In, Out> = {
        listener,
        resolve: (lane) => {
          done();
          resolve(lane);
        },
        fail: (err) => {
          done();
          reject(err);
        },
      };
      const onAbort = () => waiter.fail(signal!.reason);
      const timer = setTimeout(() => waiter.fail(new NoSeat(`no seat came free within ${this.seats.waitMs} ms`)), this.seats.waitMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.seatWaiters.push(waiter);
    });
  }

  /** Whether a seated lane would be refused at once: every seat taken and the queue full. */
  get seatsFull(): boolean {
    return !this.freeSeat() && this.seatWaiters.length >= this.seats.queue;
  }

  private freeSeat(): Slot<Out> | undefined {
    const free = this.slots.filter((s) => !s.dead && s.seated < this.seats.perWorker);
    return free.length ? free.reduce((a, b) => (b.seated < a.seated || (b.seated === a.seated && b.listeners.size < a.listeners.size) ? b : a)) : undefined;
  }

  private seatedLane(listener: (msg: Out) => void): Lane<In> | undefined {
    const slot = this.freeSeat();
    return slot && this.place(slot, this.nextSid++, listener, true);
  }

  /** A seat came free: the first waiters take what there is. */
  private seatFreed(): void {
    while (this.seatWaiters.length) {
      const waiter = this.seatWaiters[0];
      const lane = this.seatedLane(waiter.listener);
      if (!lane) return;
      waiter.resolve(lane);
    }
  }

  private place(slot: Slot<Out>, sid: number, listener: (msg: Out) => void, seated: boolean): Lane<In> {
    slot.listeners.set(sid, listener);
    if (seated) slot.seated++;
    const close = () => {
      if (!slot.listeners.delete(sid)) return false;
      if (seated && !slot.dead) {
        slot.seated--;
        this.seatFreed();
      }
      return true;
    };
    return {
      sid,
      post: (msg, transfer = []) => slot.worker.postMessage(msg, transfer),
      close: () => void close(),
      drop: (msg) => {
        if (close() && !slot.dead) slot.worker.postMessage(msg);
      },
    };
  }

  /** The workers, for tests that kill one. */
  get workers(): Worker[] {
    return this.slots.map((s) => s.worker);
  }

  /** Stops the workers: with a `shutdown` message, each gets up to `graceMs` to finish first. */
  async close(graceMs = 3000): Promise<void> {
    this.closed = true;
    for (const waiter of [...this.seatWaiters]) waiter.fail(new NoSeat("the pool is closing"));
    await Promise.all(
      this.slots.map(async ({ worker }) => {
        const shutdown = this.shutdown;
        if (shutdown !== undefined) {
          const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
          worker.postMessage(shutdown);
          let timer: Timer | undefined;
          await Promise.race([exited, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
          clearTimeout(timer);
        }
        await worker.terminate();
      }),
    );
  }
}
