import type { CatalogueData } from "../../src/catalogue/catalogue.ts";
import { POCKETSPHINX_FAMILY } from "../../src/providers/local-pocketsphinx/provider.ts";
import type { SttEvent, SttProvider, SttStream, Transcription } from "../../src/providers/stt-types.ts";
import { AsyncQueue } from "../../src/util/async-queue.ts";

// A second provider of the embedded recognizer's model, after it in routing order: where the
// request allows fallbacks, a session the local recognizer refuses lands here. It answers every
// stream and file with the text `spare`.

export const SPARE_TEXT = "spare";

/** The catalogue entry of a second provider `id` of the embedded recognizer's model (a test's own provider may take it). */
export function spareCatalogue(id = "spare"): CatalogueData {
  return {
    providers: [
      {
        id,
        name: "Spare recognizer",
        kind: "cloud",
        requiresVoice: false,
        defaults: { stt: { model: "pocketsphinx-en-us" } },
        bindings: [
          {
            capability: "stt",
            id: "pocketsphinx-en-us",
            canonical: "cmu/pocketsphinx-en-us",
            streaming: true,
            synchronous: true,
            inputFormats: ["pcm_16000"],
            price: { amount: "0.0006", per: "minute" },
          },
        ],
      },
    ],
    models: [],
  };
}

export class SpareStt implements SttProvider {
  readonly id = "spare";

  family() {
    return POCKETSPHINX_FAMILY;
  }

  async open(): Promise<SttStream> {
    const queue = new AsyncQueue<SttEvent>();
    return {
      send: () => {},
      commit: () => queue.push({ type: "committed", origin: "client", atMs: 0 }),
      clear: () => queue.push({ type: "cleared", atMs: 0 }),
      end: () => {
        queue.push({ type: "transcript", final: true, text: SPARE_TEXT, startMs: 0, endMs: 0 });
        queue.end();
      },
      cancel: () => queue.end(),
      bufferedAmount: 0,
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  async transcribe(): Promise<Transcription> {
    return { text: SPARE_TEXT, segments: [] };
  }
}
