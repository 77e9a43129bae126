import { exactBuffer } from "../src/audio/bytes.ts";
import type { VadOptions } from "../src/audio/vad.ts";
import type { Logger } from "../src/log.ts";
import type { FromAudio, ToAudio } from "./audio-protocol.ts";
import { WorkerPool } from "./pool.ts";

export interface AudioSessionOptions {
  rate: number;
  vad?: VadOptions;
  recognizer?: "pocketsphinx";
  autoCommit: boolean;
  interim: boolean;
}

/** One audio session's line to its worker. */
export interface AudioLane {
  /** Hands the frame's bytes to the worker: a frame spanning its whole buffer is transferred (the caller must not use it after), any other is copied. */
  audio(frame: Uint8Array): void;
  commit(): void;
  clear(): void;
  end(): void;
  drop(): void;
}

/** Router VAD and local recognition in worker threads (see audio-worker.ts). */
export class AudioPool {
  private readonly pool: WorkerPool<ToAudio, FromAudio>;

  constructor(size: number, log?: Logger) {
    this.pool = new WorkerPool<ToAudio, FromAudio>(new URL("./audio-worker.ts", import.meta.url), size, null, (sid) => ({ sid, ev: "error", message: "audio worker exited" }), log, { op: "shutdown", sid: 0 });
  }

  open(options: AudioSessionOptions, listener: (msg: FromAudio) => void): AudioLane {
    const lane = this.pool.open(listener);
    const { sid } = lane;
    lane.post({ op: "open", sid, ...options });
    return {
      audio: (frame) => {
        const buf = exactBuffer(frame);
        lane.post({ op: "audio", sid, buf }, [buf]);
      },
      commit: () => lane.post({ op: "commit", sid }),
      clear: () => lane.post({ op: "clear", sid }),
      end: () => lane.post({ op: "end", sid }),
      drop: () => lane.drop({ op: "drop", sid }),
    };
  }

  get workers() {
    return this.pool.workers;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
