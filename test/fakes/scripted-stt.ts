import type { CatalogueData } from "../../src/catalogue/catalogue.ts";
import { ProviderError } from "../../src/errors.ts";
import { POCKETSPHINX_FAMILY } from "../../src/providers/local-pocketsphinx/provider.ts";
import type { SttEvent, SttProvider, SttStream } from "../../src/providers/stt-types.ts";
import { AsyncQueue } from "../../src/util/async-queue.ts";

// An in-process streaming recognizer whose sessions follow a script, to forge the moment it fails
// at: right after its n-th final (the final reaches the router, the failure right behind it),
// after so many bytes (in the middle of a replay), or never saying anything. It "recognizes"
// `secondsOfSpeech` audio: each whole second it hears is a final transcript naming the second of
// the caller's audio it heard (`second N`, N the samples' value less one), so a final said twice
// or lost shows in the texts whatever provider said it.

const RATE = 16000;
const SECOND = RATE * 2;

/** `seconds` of 16 kHz PCM, second N (counting from `from`) made of samples of value N + 1. */
export function secondsOfSpeech(seconds: number, from = 0): Uint8Array {
  const samples = new Int16Array(seconds * RATE);
  for (let s = 0; s < seconds; s++) samples.fill(from + s + 1, s * RATE, (s + 1) * RATE);
  return new Uint8Array(samples.buffer);
}

export interface SttScript {
  /** Fails right after its n-th final transcript. */
  dieAfterFinal?: number;
  /** Fails once it has been sent this many bytes. */
  dieAfterBytes?: number;
  /** Says nothing (no final ever). */
  silent?: boolean;
}

/** Providers `ids` of the embedded recognizer's model (billed per minute, as cloud providers). */
export function scriptedSttCatalogue(ids: string[]): CatalogueData {
  return {
    providers: ids.map((id) => ({
      id,
      name: id,
      kind: "cloud" as const,
      requiresVoice: false,
      defaults: { stt: { model: "scripted" } },
      bindings: [
        {
          capability: "stt" as const,
          id: "scripted",
          canonical: "cmu/pocketsphinx-en-us",
          streaming: true,
          synchronous: false,
          inputFormats: ["pcm_16000" as const],
          price: { amount: "0.0006", per: "minute" as const },
        },
      ],
    })),
    models: [],
  };
}

export class ScriptedStt implements SttProvider {
  readonly plan: SttScript[] = [];
  /** Bytes each session was sent, in the order they were opened. */
  readonly received: number[] = [];

  constructor(readonly id: string) {}

  family() {
    return POCKETSPHINX_FAMILY;
  }

  async open(): Promise<SttStream> {
    const script = this.plan.shift() ?? {};
    const at = this.received.push(0) - 1;
    const queue = new AsyncQueue<SttEvent>();
    let stretch: Uint8Array[] = [];
    let stretchBytes = 0;
    let heard = 0;
    let finals = 0;
    let dead = false;
    const die = () => {
      dead = true;
      queue.fail(new ProviderError(`${this.id} failed`, true));
    };
    const final = () => {
      const audio = Buffer.concat(stretch);
      const from = heard - stretchBytes;
      stretch = [];
      stretchBytes = 0;
      if (!audio.byteLength || script.silent) return;
      const second = audio.readInt16LE(0) - 1;
      queue.push({ type: "transcript", final: true, text: `second ${second}`, startMs: from / 32, endMs: heard / 32 });
      if (++finals === script.dieAfterFinal) die();
    };
    return {
      send: (audio) => {
        if (dead) return;
        this.received[at] += audio.byteLength;
        let rest = audio;
        while (rest.byteLength && !dead) {
          const take = Math.min(rest.byteLength, SECOND - stretchBytes);
          stretch.push(rest.slice(0, take));
          stretchBytes += take;
          heard += take;
          rest = rest.subarray(take);
          if (stretchBytes === SECOND) final();
        }
        if (script.dieAfterBytes !== undefined && this.received[at] >= script.dieAfterBytes) die();
      },
      commit: () => {
        final();
        queue.push({ type: "committed", origin: "client", atMs: heard / 32 });
      },
      clear: () => {
        stretch = [];
        stretchBytes = 0;
        queue.push({ type: "cleared", atMs: heard / 32 });
      },
      end: () => {
        final();
        queue.end();
      },
      cancel: () => queue.end(),
      bufferedAmount: 0,
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  async transcribe(): Promise<never> {
    throw new ProviderError("files are not scripted", false);
  }
}
