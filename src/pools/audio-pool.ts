import { exactBuffer } from "../audio/bytes.ts";
import { disableOnnxTelemetry } from "../audio/onnx-telemetry.ts";
import type { VadOptions } from "../audio/vad.ts";
import type { Logger } from "../log.ts";
import { projectFile } from "../project-file.ts";
import type { AudioWorkerOptions, FromAudio, ToAudio } from "../../workers/audio-protocol.ts";
import { type Lane, type Seats, WorkerPool } from "./worker-pool.ts";
import { PoolFront } from "./pool-front.ts";

export interface AudioSessionOptions {
  rate: number;
  vad?: VadOptions;
  /** With `vad`: its speech probability comes back as `vad_score` messages, a few a second (for a client that shows it). */
  scores?: boolean;
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

/**
 * Router VAD and local recognition in worker threads (see audio-worker.ts). A recognition session
 * holds one of its worker's PocketSphinx decoders (`decoders.perWorker` each, ~95 MiB apiece)
 * from open to end; sessions beyond them wait briefly in a queue, then are refused (NoSeat).
 */
export class AudioPool extends PoolFront<ToAudio, FromAudio> {
  constructor(
    size: number,
    /** The decoders' seats, and where PocketSphinx's model is (POCKETSPHINX_MODEL_DIR; unset: Debian's place). */
    readonly decoders: Seats & { modelDir?: string },
    log?: Logger,
    /** Config's `cacheDir`: what the executable unpacks to load the VAD goes there. */
    cacheDir?: string,
  ) {
    disableOnnxTelemetry(); // the workers' VAD loads onnxruntime
    super(
      new WorkerPool<ToAudio, FromAudio>(
        projectFile("workers/audio-worker.ts"),
        size,
        { decoders: decoders.perWorker, modelDir: decoders.modelDir, cacheDir } satisfies AudioWorkerOptions,
        (sid) => ({ sid, ev: "error", message: "audio worker exited" }),
        log,
        { op: "shutdown", sid: 0 },
        decoders,
      ),
    );
  }

  /** A session with the router VAD only (its recognizer is upstream). */
  open(options: AudioSessionOptions, listener: (msg: FromAudio) => void): AudioLane {
    return this.start(this.pool.open(listener), options, false);
  }

  /** A local recognition session, once a decoder is free for it; rejects with NoSeat, or with `signal`'s reason. */
  async openRecognizer(options: AudioSessionOptions, listener: (msg: FromAudio) => void, signal?: AbortSignal): Promise<AudioLane> {
    return this.start(await this.pool.openSeated(listener, signal), options, true);
  }

  /** Whether a recognition session would be refused at once: every decoder busy and the queue full. */
  get recognizersFull(): boolean {
    return this.pool.seatsFull;
  }

  private start(lane: Lane<ToAudio>, options: AudioSessionOptions, recognizer: boolean): AudioLane {
    const { sid } = lane;
    lane.post({ op: "open", sid, ...options, recognizer });
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
}
