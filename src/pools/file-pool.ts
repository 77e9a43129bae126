import { exactBuffer } from "../audio/bytes.ts";
import type { Probe } from "../audio/probe.ts";
import { ApiError } from "../errors.ts";
import type { Logger } from "../log.ts";
import { projectFile } from "../project-file.ts";
import type { FromFiles, ToFiles } from "../../workers/file-protocol.ts";
import { type Lane, WorkerPool } from "./worker-pool.ts";
import { PoolFront } from "./pool-front.ts";

/** Seconds of audio a file worker decodes at a time, when its reader has read the batch before. */
const BATCH_SECONDS = 5;

/**
 * The CPU work on uploaded files, in worker threads (see file-worker.ts), so that measuring or
 * decoding a long file never stalls the event loop. Each request goes to the least-loaded worker;
 * a worker that dies fails only the requests it held, and is replaced.
 */
export class FilePool extends PoolFront<ToFiles, FromFiles> {
  constructor(size: number, log?: Logger) {
    super(new WorkerPool<ToFiles, FromFiles>(projectFile("workers/file-worker.ts"), size, undefined, (sid) => ({ sid, ev: "error", error: { message: "file worker exited" } }), log));
  }

  /**
   * The file's duration, measured from its audio (`probeDuration`), and the file back. Its bytes
   * are transferred to the worker, not copied (unless `bytes` is a view on part of a larger
   * buffer): `bytes` is empty afterwards, use the ones returned.
   */
  async probe(bytes: Uint8Array): Promise<{ probe: Probe; bytes: Uint8Array }> {
    const file = exactBuffer(bytes);
    const answer = await this.ask((sid) => ({ op: "probe", sid, file }), [file]);
    if (answer.ev !== "probed") throw unexpected(answer);
    return { probe: answer.probe, bytes: new Uint8Array(answer.file) };
  }

  /**
   * A WAV or MP3 file as mono 16-bit PCM at `rate`, at most `maxSamples` samples, read in chunks of
   * `chunkSamples` (each its own buffer). The worker decodes a batch at a time, the next once the
   * reader has taken the one before; the first before this resolves, so a file the decoders cannot
   * read is refused here (422 `validation`). The file is copied to the worker once. A reader that
   * stops early closes it.
   */
  async decode(bytes: Uint8Array, container: string, rate: number, { maxSamples, chunkSamples }: { maxSamples: number; chunkSamples: number }): Promise<DecodedAudio> {
    const decoded = new DecodedAudio(this.pool);
    await decoded.open({ file: bytes, container, rate, maxSamples, batchSamples: Math.max(chunkSamples, rate * BATCH_SECONDS), chunkSamples });
    return decoded;
  }
}

/** The worker's error as it was thrown there (an ApiError with its code), or an answer of the wrong kind. */
function unexpected(answer: FromFiles): Error {
  if (answer.ev !== "error") return new Error(`unexpected ${answer.ev} from a file worker`);
  const { message, code, extra } = answer.error;
  return code ? new ApiError(code, message, extra) : new Error(message);
}

type DecodeRequest = Omit<Extract<ToFiles, { op: "decode" }>, "op" | "sid">;

/**
 * A file's audio as a file worker decodes it (FilePool.decode): each chunk in a buffer of its own;
 * the next batch is asked for once the reader has taken the one before. Read it once. Throws the
 * worker's error (a worker that died is a plain Error); `close` (or leaving the loop) lets the
 * worker drop the file.
 */
export class DecodedAudio implements AsyncIterable<Uint8Array> {
  private readonly lane: Lane<ToFiles>;
  private chunks: ArrayBuffer[] = [];
  private asked = false;
  private done = false;
  private failure: Error | undefined;
  private arrived: (() => void) | undefined;

  constructor(pool: WorkerPool<ToFiles, FromFiles>) {
    this.lane = pool.open((answer) => this.answer(answer));
  }

  /** Starts the decoding and waits for its first batch; rejects with the worker's refusal. */
  async open(request: DecodeRequest): Promise<void> {
    this.ask({ op: "decode", sid: this.lane.sid, ...request });
    await this.answered();
    if (this.failure) throw this.failure;
  }

  /** Stops here: the worker forgets the file (nothing when it was read to the end). */
  close(): void {
    if (!this.done) this.lane.drop({ op: "drop", sid: this.lane.sid });
    this.done = true;
    this.chunks = [];
    this.wake();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    try {
      for (;;) {
        const chunk = this.chunks.shift();
        if (chunk) yield new Uint8Array(chunk);
        else if (this.failure) throw this.failure;
        else if (this.done) return;
        else {
          if (!this.asked) this.ask({ op: "more", sid: this.lane.sid });
          await this.answered();
        }
      }
    } finally {
      this.close();
    }
  }

  private ask(msg: ToFiles): void {
    this.asked = true;
    this.lane.post(msg);
  }

  private answered(): Promise<void> {
    return this.asked ? new Promise((resolve) => (this.arrived = resolve)) : Promise.resolve();
  }

  private answer(answer: FromFiles): void {
    this.asked = false;
    if (answer.ev === "decoded") {
      this.chunks.push(...answer.chunks);
      this.done = answer.done;
    } else {
      this.failure = unexpected(answer);
      this.done = true;
    }
    if (this.done) this.lane.close();
    this.wake();
  }

  private wake(): void {
    const arrived = this.arrived;
    this.arrived = undefined;
    arrived?.();
  }
}
