import { exactBuffer } from "../audio/bytes.ts";
import type { Probe } from "../audio/probe.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { projectFile } from "../project-file.ts";
import type { FromFiles, ToFiles } from "../../workers/file-protocol.ts";
import { WorkerPool } from "./worker-pool.ts";
import type { PoolLoad } from "../metrics.ts";

/**
 * The CPU work on uploaded files, in worker threads (see file-worker.ts), so that measuring or
 * decoding a long file never stalls the event loop. Each request goes to the least-loaded worker;
 * a worker that dies fails only the requests it held, and is replaced.
 */
export class FilePool {
  private readonly pool: WorkerPool<ToFiles, FromFiles>;

  constructor(size: number, log?: Logger) {
    this.pool = new WorkerPool<ToFiles, FromFiles>(projectFile("workers/file-worker.ts"), size, undefined, (sid) => ({ sid, ev: "error", error: { message: "file worker exited" } }), log);
  }

  /**
   * The file's duration, measured from its audio (`probeDuration`), and the file back. Its bytes
   * are transferred to the worker, not copied (unless `bytes` is a view on part of a larger
   * buffer): `bytes` is empty afterwards, use the ones returned.
   */
  async probe(bytes: Uint8Array): Promise<{ probe: Probe; bytes: Uint8Array }> {
    const file = exactBuffer(bytes);
    const answer = await this.ask((sid) => ({ op: "probe", sid, file }), [file]);
    if (answer.ev !== "probed") throw this.unexpected(answer);
    return { probe: answer.probe, bytes: new Uint8Array(answer.file) };
  }

  /** A WAV or MP3 file as mono 16-bit PCM at `rate` (`decodeToPcm`), in chunks of `chunkSamples` samples. The file is copied to the worker once. */
  async decode(bytes: Uint8Array, container: string, rate: number, chunkSamples: number): Promise<ArrayBuffer[]> {
    const answer = await this.ask((sid) => ({ op: "decode", sid, file: bytes, container, rate, chunkSamples }));
    if (answer.ev !== "decoded") throw this.unexpected(answer);
    return answer.chunks;
  }

  private ask(message: (sid: number) => ToFiles, transfer: ArrayBuffer[] = []): Promise<FromFiles> {
    return new Promise((resolve) => {
      const lane = this.pool.open((answer) => {
        lane.close();
        resolve(answer);
      });
      lane.post(message(lane.sid), transfer);
    });
  }

  /** The worker's error as it was thrown there (an ApiError with its code), or an answer of the wrong kind. */
  private unexpected(answer: FromFiles): Error {
    if (answer.ev !== "error") return new Error(`unexpected ${answer.ev} from a file worker`);
    const { message, code, extra } = answer.error;
    return code ? new ApiError(code, message, extra) : new Error(message);
  }

  /** The workers, for tests that kill one. */
  get workers() {
    return this.pool.workers;
  }

  load(): PoolLoad {
    return this.pool.load();
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
