// A file worker: measures uploaded files' durations and decodes them for recognizers that take PCM,
// off the main thread (a long or forged file takes up to seconds of CPU). Each request stands
// alone; none keeps state here.

import { parentPort } from "node:worker_threads";
import { decodeToPcm } from "../src/audio/decode.ts";
import { probeDuration } from "../src/audio/probe.ts";
import { ApiError } from "../src/errors.ts";
import type { FromFiles, ToFiles } from "./file-protocol.ts";

const post = (msg: FromFiles, transfer: ArrayBuffer[] = []) => parentPort!.postMessage(msg, transfer);

async function handle(msg: ToFiles): Promise<void> {
  const { sid } = msg;
  if (msg.op === "probe") {
    const probe = probeDuration(new Uint8Array(msg.file));
    return post({ sid, ev: "probed", probe, file: msg.file }, [msg.file]);
  }
  const pcm = await decodeToPcm(msg.file, msg.container, msg.rate);
  const chunks: ArrayBuffer[] = [];
  for (let i = 0; i < pcm.length; i += msg.chunkSamples) chunks.push(pcm.slice(i, i + msg.chunkSamples).buffer);
  post({ sid, ev: "decoded", chunks }, chunks);
}

parentPort!.on("message", (msg: ToFiles) => {
  handle(msg).catch((err) => post({ sid: msg.sid, ev: "error", error: err instanceof ApiError ? { message: err.message, code: err.code, extra: err.extra } : { message: (err as Error).message } }));
});
