import type { Logger } from "../src/log.ts";
import { projectFile } from "../src/project-file.ts";
import type { EngineFormat, EngineName, EngineWorkerOptions, FromWorker, ToWorker } from "./engine-protocol.ts";
import { WorkerPool } from "./pool.ts";
import type { PoolLoad } from "../src/metrics.ts";

export type EngineListener = (msg: FromWorker) => void;

/** One synthesis session's line to its engine worker. */
export interface EngineSession {
  /** One utterance; with `raw` (the text it stands for) its character times come before its audio. */
  say(text: string, raw?: string): void;
  end(): void;
  /** Forget the session: nothing more is delivered to its listener. */
  drop(): void;
}

/** The embedded TTS engines' worker pool (see engine-worker.ts). */
export class EnginePool {
  private readonly pool: WorkerPool<ToWorker, FromWorker>;

  constructor(size: number, options: EngineWorkerOptions, log?: Logger) {
    this.pool = new WorkerPool<ToWorker, FromWorker>(projectFile("workers/engine-worker.ts"), size, options, (sid) => ({ sid, ev: "error", message: "engine worker exited" }), log);
  }

  open(engine: EngineName, voice: string | undefined, format: EngineFormat, listener: EngineListener, speed?: number): EngineSession {
    const lane = this.pool.open(listener);
    const { sid } = lane;
    lane.post({ op: "open", sid, engine, voice, format, speed });
    return {
      say: (text, raw) => lane.post({ op: "say", sid, text, ...(raw === undefined ? {} : { raw }) }),
      end: () => lane.post({ op: "end", sid }),
      drop: () => lane.drop({ op: "drop", sid }),
    };
  }

  /** The engine's voices and every name it takes for one, asked of the least-loaded worker. */
  voices(engine: EngineName): Promise<{ voices: unknown[]; names: string[] }> {
    return new Promise((resolve, reject) => {
      const lane = this.pool.open((msg) => {
        lane.close();
        if (msg.ev === "voices") resolve({ voices: msg.voices, names: msg.names });
        else reject(new Error(msg.ev === "error" ? msg.message : `unexpected ${msg.ev}`));
      });
      lane.post({ op: "voices", sid: lane.sid, engine });
    });
  }

  load(): PoolLoad {
    return this.pool.load();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
