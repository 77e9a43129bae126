// A file worker: measures uploaded files' durations and decodes them for recognizers that take PCM,
// off the main thread (a long or forged file takes up to seconds of CPU). A decoding is kept here
// between its batches, so that only a batch of the file's audio is decoded ahead of its reader;
// measuring keeps no state.

import { parentPort } from "node:worker_threads";
import { PcmDecoder } from "../src/audio/decode.ts";
import { probeDuration } from "../src/audio/probe.ts";
import { ApiError } from "../src/errors.ts";
import type { FromFiles, ToFiles } from "./file-protocol.ts";

const post = (msg: FromFiles, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(msg, transfer);

interface Decoding {
  decoder: PcmDecoder;
  /** Samples still allowed. */
  left: number;
  batchSamples: number;
  chunkSamples: number;
}
const decodings = new Map<number, Decoding>();
/** Decodings being opened (an MP3 decoder is made asynchronously); a drop meanwhile takes its sid out. */
const opening = new Set<number>();

function forget(sid: number): void {
  opening.delete(sid);
  decodings.get(sid)?.decoder.free();
  decodings.delete(sid);
}

function nextBatch(sid: number, d: Decoding): void {
  const pcm = d.decoder.read(Math.min(d.batchSamples, d.left));
  d.left -= pcm.length;
  const done = pcm.length < d.batchSamples || d.left === 0;
  if (done) forget(sid);
  const chunks: ArrayBuffer[] = [];
  for (let i = 0; i < pcm.length; i += d.chunkSamples) chunks.push(pcm.slice(i, i + d.chunkSamples).buffer);
  post({ sid, ev: "decoded", chunks, done }, chunks);
}

async function handle(msg: ToFiles): Promise<void> {
  const { sid } = msg;
  switch (msg.op) {
    case "probe": {
      const probe = probeDuration(new Uint8Array(msg.file));
      return post({ sid, ev: "probed", probe, file: msg.file }, [msg.file]);
    }
    case "decode": {
      opening.add(sid);
      const decoder = await PcmDecoder.open(msg.file, msg.container, msg.rate);
      if (!opening.delete(sid)) return decoder.free();
      const decoding = { decoder, left: msg.maxSamples, batchSamples: msg.batchSamples, chunkSamples: msg.chunkSamples };
      decodings.set(sid, decoding);
      return nextBatch(sid, decoding);
    }
    case "more": {
      const decoding = decodings.get(sid);
      return decoding && nextBatch(sid, decoding);
    }
    case "drop":
      return forget(sid);
  }
}

parentPort!.on("message", (msg: ToFiles) => {
  handle(msg).catch((err) => {
    forget(msg.sid);
    post({ sid: msg.sid, ev: "error", error: err instanceof ApiError ? { message: err.message, code: err.code, extra: err.extra } : { message: (err as Error).message } });
  });
});
