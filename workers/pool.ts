import { Worker } from "node:worker_threads";
import type { Logger } from "../src/log.ts";

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

  constructor(
    private readonly url: URL,
    size: number,
    private readonly workerData: unknown,
    private readonly death: (sid: number) => Out,
    private readonly log?: Logger,
    /** Asks a worker to finish its work and exit; without it, closing terminates at once. */
    private readonly shutdown?: In,
  ) {
    for (let i = 0; i < size; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot<Out> {
    const worker = new Worker(this.url, { workerData: this.workerData });
    const slot: Slot<Out> = { worker, listeners: new Map(), dead: false };
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
        if (!this.closed) this.slots[this.slots.indexOf(slot)] = this.spawn();
      }, delay).unref();
    });
    worker.unref();
    return slot;
  }

  open(listener: (msg: Out) => void): Lane<In> {
    const sid = this.nextSid++;
    const live = this.slots.filter((s) => !s.dead);
    if (live.length === 0) {
      // Every worker is being replaced: the session fails at once instead of waiting on a dead one.
      queueMicrotask(() => listener(this.death(sid)));
      return { sid, post: () => {}, close: () => {}, drop: () => {} };
    }
    const slot = live.reduce((a, b) => (b.listeners.size < a.listeners.size ? b : a));
    slot.listeners.set(sid, listener);
    const close = () => slot.listeners.delete(sid);
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
