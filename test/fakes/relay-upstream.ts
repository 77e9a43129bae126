import type { CatalogueData } from "../../src/catalogue/catalogue.ts";
import { ProviderError } from "../../src/errors.ts";
import type { RawUpstream, SttEvent, SttFamily, SttProvider, SttStream } from "../../src/providers/stt-types.ts";
import { AsyncQueue } from "../../src/util/async-queue.ts";
import { oneBindingCatalogue, streamingSttBinding } from "./one-binding-catalogue.ts";

// A realtime STT upstream on loopback for provider passthrough: it records every frame exactly as
// received and answers each one with frames of its own (a native JSON event with odd spacing, and
// a binary frame), so tests can check that frames cross the router byte for byte both ways.

export interface RelayUpstream {
  url: string;
  received: (string | Uint8Array)[];
  stop(): void;
}

/**
 * `record: false` keeps nothing (a benchmark's long run). `answerEvery: n` answers once per n bytes
 * of a binary frame (at least once), so a count of answers means the same however the router
 * gathered the frames.
 */
export function startRelayUpstream({ record = true, answerEvery = 0 } = {}): RelayUpstream {
  const received: (string | Uint8Array)[] = [];
  let n = 0;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response("upgrade", { status: 426 })),
    websocket: {
      message(ws, frame) {
        if (record) received.push(typeof frame === "string" ? frame : new Uint8Array(frame));
        const answers = typeof frame === "string" || !answerEvery ? 1 : Math.max(1, Math.round(frame.byteLength / answerEvery));
        for (let i = 0; i < answers; i++) {
          n++;
          ws.send(`{ "type" : "Results", "n": ${n},"channel":{"alternatives":[{"transcript":"héllo"}]} }`);
          ws.send(new Uint8Array([n, 0, 255, 7]));
        }
        if (typeof frame === "string" && frame.includes("CloseStream")) ws.close(1000, "done");
      },
    },
  });
  return { url: `ws://127.0.0.1:${server.port}`, received, stop: () => server.stop(true) };
}

export const RELAY_FAMILY: SttFamily = {
  name: "relay-test",
  portableOptions: ["language", "interim_results"],
  turnDetector: "acoustic",
  turnStyles: ["acoustic"],
  commitFrame: true,
  interimDefault: true,
  inputFormats: ["pcm_16000"],
  audioOptions: { encoding: "encoding", sampleRate: "sample_rate" },
  passthrough: true,
};

/** A provider over the relay upstream: its `Results` become transcripts in the normalized mode. */
export class RelayProvider implements SttProvider {
  readonly id = "relay";
  constructor(private readonly url: string) {}

  family(): SttFamily {
    return RELAY_FAMILY;
  }

  async open(): Promise<SttStream> {
    const raw = await this.passthrough();
    const queue = new AsyncQueue<SttEvent>();
    raw.onFrame((frame) => {
      if (typeof frame !== "string") return;
      const ev = JSON.parse(frame);
      if (ev.type === "Results") queue.push({ type: "transcript", final: true, text: ev.channel.alternatives[0].transcript, startMs: 0, endMs: 0 });
    });
    raw.onClose(() => queue.end());
    return {
      send: (audio) => raw.send(audio),
      commit: () => raw.send('{"type":"Finalize"}'),
      clear: () => {},
      end: () => raw.send('{"type":"CloseStream"}'),
      cancel: () => {
        raw.close(1000, "cancelled");
        queue.end();
      },
      bufferedAmount: 0,
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  passthrough(): Promise<RawUpstream> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url);
      ws.binaryType = "arraybuffer";
      const frameListeners: ((f: string | Uint8Array) => void)[] = [];
      const closeListeners: ((code: number, reason: string) => void)[] = [];
      ws.onmessage = (e) => {
        for (const l of frameListeners) l(typeof e.data === "string" ? e.data : new Uint8Array(e.data));
      };
      ws.onclose = (e) => {
        for (const l of closeListeners) l(e.code, e.reason);
      };
      ws.onerror = () => reject(new ProviderError("relay upstream refused", true));
      ws.onopen = () =>
        resolve({
          send: (f) => ws.send(f),
          onFrame: (l) => void frameListeners.push(l),
          onClose: (l) => void closeListeners.push(l),
          close: (code, reason) => ws.close(code, reason),
        });
    });
  }
}

export function relayCatalogue(): CatalogueData {
  return oneBindingCatalogue("relay", "Relay test", false, streamingSttBinding("relay-1", "test/relay-1"), "Relay test");
}
