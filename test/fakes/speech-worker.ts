// The thread of speech-thread.ts: Flite speech at a rate, for each request, in order.
import { parentPort } from "node:worker_threads";
import { speech } from "./http-fake.ts";

parentPort!.on("message", (data: { id: number; text: string; rate: number }) => {
  const pcm = speech(data.text, data.rate);
  parentPort!.postMessage({ id: data.id, pcm }, [pcm.buffer as ArrayBuffer]);
});
