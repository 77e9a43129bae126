import { Worker } from "node:worker_threads";

// A fake's speech made on a thread of its own: a fake that runs in its own process beside a busy
// router (a benchmark) keeps answering its other sockets while Flite synthesizes a new text, as a
// provider's other sessions do not wait on one session's synthesis.

export type SpeechMaker = (text: string, rate: number) => Promise<Uint8Array>;

export function speechThread(): SpeechMaker {
  const worker = new Worker(new URL("./speech-worker.ts", import.meta.url));
  worker.unref();
  const waiting = new Map<number, (pcm: Uint8Array) => void>();
  let next = 0;
  worker.on("message", (data: { id: number; pcm: Uint8Array }) => {
    waiting.get(data.id)?.(data.pcm);
    waiting.delete(data.id);
  });
  return (text, rate) =>
    new Promise((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      worker.postMessage({ id, text, rate });
    });
}
