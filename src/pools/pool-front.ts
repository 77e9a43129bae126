import type { Worker } from "node:worker_threads";
import type { PoolLoad } from "../metrics.ts";
import type { WorkerPool } from "./worker-pool.ts";

/** What a pool with its own protocol shows of the worker pool under it: its threads, its load, one-answer requests and its end. */
export abstract class PoolFront<In, Out extends { sid: number }> {
  protected constructor(protected readonly pool: WorkerPool<In, Out>) {}

  /** The workers, for tests that kill one. */
  get workers(): Worker[] {
    return this.pool.workers;
  }

  /** A request answered by one message, on a lane of its own to the least-loaded worker. */
  protected ask(message: (sid: number) => In, transfer: ArrayBuffer[] = []): Promise<Out> {
    return new Promise((resolve) => {
      const lane = this.pool.open((answer) => {
        lane.close();
        resolve(answer);
      });
      lane.post(message(lane.sid), transfer);
    });
  }

  load(): PoolLoad {
    return this.pool.load();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
