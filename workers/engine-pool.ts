import { Worker } from "node:worker_threads";
import type { Logger } from "../src/log.ts";
import type { EngineFormat, EngineName, EngineWorkerOptions, FromWorker, ToWorker } from "./engine-protocol.ts";

export type EngineListener = (msg: FromWorker) => void;

/** One session's line to the worker it was placed on. */
export interface EngineSession {
  say(text: string): void;
  end(): void;
  /** Forget the session: nothing more is delivered to its listener. */
  drop(): void;
}

interface Slot {
  worker: Worker;
  sessions: Map<number, EngineListener>;
}

/**
 * A fixed pool of engine workers. Each session sticks to the least-loaded worker, so its
 * utterances stay in order and its MP3 encoder keeps its state. A worker that dies fails only
 * its own sessions and is replaced.
 */
export class EnginePool {
  private readonly slots: Slot[] = [];
  private nextSid = 1;
  private closed = false;

  constructor(
    size: number,
    private readonly options: EngineWorkerOptions,
    private readonly log?: Logger,
  ) {
    for (let i = 0; i < size; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const worker = new Worker(new URL("./engine-worker.ts", import.meta.url), { workerData: this.options });
    const slot: Slot = { worker, sessions: new Map() };
    worker.on("message", (msg: FromWorker) => slot.sessions.get(msg.sid)?.(msg));
    worker.on("error", (err) => this.log?.error({ err }, "engine worker failed"));
    worker.on("exit", (code) => {
      if (this.closed) return;
      this.log?.error({ code }, "engine worker exited; replacing it");
      for (const [sid, listener] of slot.sessions) listener({ sid, ev: "error", message: "engine worker exited" });
      this.slots[this.slots.indexOf(slot)] = this.spawn();
    });
    worker.unref();
    return slot;
  }

  open(engine: EngineName, voice: string | undefined, format: EngineFormat, listener: EngineListener): EngineSession {
    const { slot, sid } = this.place(listener);
    const send = (msg: ToWorker) => slot.worker.postMessage(msg);
    send({ op: "open", sid, engine, voice, format });
    return {
      say: (text) => send({ op: "say", sid, text }),
      end: () => send({ op: "end", sid }),
      drop: () => {
        if (slot.sessions.delete(sid)) send({ op: "drop", sid });
      },
    };
  }

  private place(listener: EngineListener): { slot: Slot; sid: number } {
    const slot = this.slots.reduce((a, b) => (b.sessions.size < a.sessions.size ? b : a));
    const sid = this.nextSid++;
    slot.sessions.set(sid, listener);
    return { slot, sid };
  }

  /** The engine's voice list, asked of the least-loaded worker. */
  voices(engine: EngineName): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      const { slot, sid } = this.place((msg) => {
        slot.sessions.delete(sid);
        if (msg.ev === "voices") resolve(msg.voices);
        else reject(new Error(msg.ev === "error" ? msg.message : `unexpected ${msg.ev}`));
      });
      slot.worker.postMessage({ op: "voices", sid, engine } satisfies ToWorker);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
