import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Logger } from "../log.ts";
import { projectFile } from "../project-file.ts";
import type { EngineFormat, EngineLane, EngineName, EngineWorkerOptions, FromWorker, ToWorker } from "../../workers/engine-protocol.ts";
import { WorkerPool } from "./worker-pool.ts";
import { PoolFront } from "./pool-front.ts";

export type EngineListener = (msg: FromWorker) => void;

/** One synthesis session's line to its engine worker. */
export interface EngineSession {
  /** One utterance; with `raw` (the text it stands for) its character times come before its audio. */
  say(text: string, raw?: string): void;
  end(): void;
  /** Forget the session: nothing more is delivered to its listener. */
  drop(): void;
}

/** Every open pool's scratch directory, removed if the process exits before its pool closes. */
const openScratchDirs = new Set<string>();
const removeScratchDir = (dir: string) => rmSync(dir, { recursive: true, force: true });
process.on("exit", () => openScratchDirs.forEach(removeScratchDir));

/**
 * The embedded TTS engines' worker pool (see engine-worker.ts). The engines' files (Flite's WAVs)
 * go in a temporary directory of the pool's, removed by the main thread when the pool closes or
 * the process exits: a worker thread that is terminated runs no clean-up of its own.
 */
export class EnginePool extends PoolFront<ToWorker, FromWorker> {
  private readonly scratchDir: string;

  constructor(size: number, options: Omit<EngineWorkerOptions, "scratchDir">, log?: Logger) {
    const scratchDir = mkdtempSync(join(tmpdir(), "voxroute-engines-"));
    openScratchDirs.add(scratchDir);
    const workerOptions: EngineWorkerOptions = { ...options, scratchDir };
    super(new WorkerPool<ToWorker, FromWorker>(projectFile("workers/engine-worker.ts"), size, workerOptions, (sid) => ({ sid, ev: "error", message: "engine worker exited" }), log));
    this.scratchDir = scratchDir;
  }

  open(engine: EngineName, voice: string | undefined, format: EngineFormat, listener: EngineListener, how: { speed?: number; lane?: EngineLane } = {}): EngineSession {
    const lane = this.pool.open(listener);
    const { sid } = lane;
    lane.post({ op: "open", sid, engine, voice, format, ...how });
    return {
      say: (text, raw) => lane.post({ op: "say", sid, text, ...(raw === undefined ? {} : { raw }) }),
      end: () => lane.post({ op: "end", sid }),
      drop: () => lane.drop({ op: "drop", sid }),
    };
  }

  /** The engine's voices and every name it takes for one, asked of the least-loaded worker. */
  async voices(engine: EngineName): Promise<{ voices: unknown[]; names: string[] }> {
    const msg = await this.ask((sid) => ({ op: "voices", sid, engine }));
    if (msg.ev !== "voices") throw new Error(msg.ev === "error" ? msg.message : `unexpected ${msg.ev}`);
    return { voices: msg.voices, names: msg.names };
  }

  override async close(): Promise<void> {
    await super.close();
    openScratchDirs.delete(this.scratchDir);
    removeScratchDir(this.scratchDir);
  }
}
