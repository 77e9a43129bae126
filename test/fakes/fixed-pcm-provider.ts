import type { CatalogueData } from "../../src/catalogue/catalogue.ts";
import type { ProviderSpec } from "../../src/catalogue/types.ts";
import { ProviderError } from "../../src/errors.ts";
import type { TtsEvent, TtsProvider, TtsStream, TtsStreamRequest } from "../../src/providers/types.ts";
import { AsyncQueue } from "../../src/util/async-queue.ts";

// In-process providers with no engine cost: they let tests and the benchmark see the router's own
// behaviour and overhead. `fixed` emits a fixed PCM tone per flushed text; `broken` fails in the
// ways a real upstream does.

export const TEST_MODEL = "test/echo";
export const FIXED_RATE = 16000;
/** 20 ms of a 440 Hz tone at 16 kHz, 16-bit mono. */
export const FIXED_CHUNK = (() => {
  const samples = new Int16Array(FIXED_RATE / 50);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / FIXED_RATE));
  return new Uint8Array(samples.buffer);
})();

function spec(id: string): ProviderSpec {
  return {
    id,
    name: `Test ${id}`,
    kind: "local",
    requiresVoice: false,
    defaults: { tts: { model: "echo" } },
    bindings: [{ capability: "tts", id: "echo", canonical: TEST_MODEL, streaming: true, synchronous: true, formats: ["pcm"], price: { amount: "0.00001", per: "character" } }],
  };
}

export const UNPRICED_MODEL = "test/unpriced";

/** Test providers serving TEST_MODEL at 10 credits per character; `unpriced` serves UNPRICED_MODEL without a price. */
export function testCatalogue(ids: string[]): CatalogueData {
  const unpriced: ProviderSpec = { ...spec("unpriced"), bindings: [{ capability: "tts", id: "free", canonical: UNPRICED_MODEL, streaming: true, synchronous: true, formats: ["pcm"] }] };
  return {
    providers: [...ids.map(spec), unpriced],
    models: [
      { canonical: TEST_MODEL, name: "Test echo", capability: "tts", aliases: ["echo-alias"] },
      { canonical: UNPRICED_MODEL, name: "Test unpriced", capability: "tts", aliases: [] },
    ],
  };
}

/** Emits `chunksPerFlush` fixed chunks for every flush (and at end) that follows some text. */
export class FixedPcmProvider implements TtsProvider {
  opened = 0;
  constructor(
    readonly id = "fixed",
    private readonly chunksPerFlush = 5,
    private readonly openDelayMs = 0,
  ) {}

  async open(_req: TtsStreamRequest): Promise<TtsStream> {
    this.opened++;
    if (this.openDelayMs) await Bun.sleep(this.openDelayMs);
    const queue = new AsyncQueue<TtsEvent>();
    let text = "";
    const speak = () => {
      if (text) for (let i = 0; i < this.chunksPerFlush; i++) queue.push({ type: "audio", audio: FIXED_CHUNK });
      text = "";
    };
    return {
      audioFormat: { encoding: "pcm_s16le", sampleRate: FIXED_RATE, channels: 1 },
      write: (t) => void (text += t),
      flush: () => {
        speak();
        queue.push({ type: "flushed" });
      },
      end: () => {
        speak();
        queue.end();
      },
      cancel: () => queue.end(),
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  async voices() {
    return [];
  }
}

/** A FixedPcmProvider whose voice list never comes; `listsAsked` counts the times it was asked for it. */
export class StalledListProvider extends FixedPcmProvider {
  listsAsked = 0;

  override voices(): Promise<never> {
    this.listsAsked++;
    return new Promise(() => {});
  }
}

export type FailureMode = "refuse" | "hang" | "fail-before-audio" | "fail-after-audio" | "reject-voice" | "end-early";

/** A PCM stream that runs `die` on its event queue when flushed or ended: the body of a provider that fails on cue. */
export function streamDyingOnFlush(die: (queue: AsyncQueue<TtsEvent>) => void, write: (text: string) => void = () => {}): TtsStream {
  const queue = new AsyncQueue<TtsEvent>();
  const onFlush = () => die(queue);
  return {
    audioFormat: { encoding: "pcm_s16le", sampleRate: FIXED_RATE, channels: 1 },
    write,
    flush: onFlush,
    end: onFlush,
    cancel: () => queue.end(),
    [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
  };
}

/** A provider that fails the way an upstream does: refused, silent, dying mid-stream, or ending too soon. */
export class BrokenProvider implements TtsProvider {
  opened = 0;
  constructor(
    readonly id: string,
    private readonly mode: FailureMode,
  ) {}

  async open(_req: TtsStreamRequest): Promise<TtsStream> {
    this.opened++;
    if (this.mode === "refuse") throw new ProviderError("connection refused", true);
    if (this.mode === "reject-voice") throw new ProviderError("unknown voice", false, "voice");
    if (this.mode === "hang") await new Promise(() => {});
    return streamDyingOnFlush((queue) => {
      if (this.mode === "fail-after-audio" || this.mode === "end-early") queue.push({ type: "audio", audio: FIXED_CHUNK });
      // "end-early": the upstream closes normally, though the session is not over.
      if (this.mode === "end-early") queue.end();
      else queue.fail(new ProviderError("upstream returned 500", true));
    });
  }

  async voices() {
    return [];
  }
}
