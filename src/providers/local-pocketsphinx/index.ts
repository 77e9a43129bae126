import type { ModelSpec, ProviderSpec } from "../../catalogue/types.ts";
import { defineProvider } from "../home.ts";
import { availability } from "./decoder.ts";
import { LocalSphinxProvider, POCKETSPHINX_FAMILY } from "./provider.ts";

export const POCKETSPHINX_MODEL: ModelSpec = { canonical: "cmu/pocketsphinx-en-us", name: "PocketSphinx (US English)", capability: "stt", aliases: ["pocketsphinx"] };

/** CMU PocketSphinx from Debian's packages: served when the library and model are installed. */
export const POCKETSPHINX: ProviderSpec = {
  id: "pocketsphinx",
  name: "PocketSphinx (embedded)",
  kind: "local",
  requiresVoice: false,
  defaults: { stt: { model: "pocketsphinx-en-us" } },
  bindings: [
    {
      capability: "stt",
      id: "pocketsphinx-en-us",
      canonical: POCKETSPHINX_MODEL.canonical,
      streaming: true,
      synchronous: true,
      batch: false,
      inputFormats: POCKETSPHINX_FAMILY.inputFormats,
      price: { amount: "0.0006", per: "minute" },
    },
  ],
};

/**
 * The embedded recognizer, decoding in the audio workers. Its capacity (LOCAL_STT_*) sizes the
 * audio workers' decoder pools and is read with them in config.ts.
 */
export const pocketsphinx = defineProvider({
  id: "pocketsphinx",
  settings: () => ({}),
  async probe(_settings, log): Promise<boolean> {
    const found = availability();
    if (!found.ok) log.warn({ reason: found.reason }, "local STT (PocketSphinx) disabled");
    return found.ok;
  },
  unprobed: false,
  catalogue: (_settings, installed) => ({ providers: installed ? [POCKETSPHINX] : [], models: [POCKETSPHINX_MODEL] }),
  stt: (_settings, runtime, installed) => (installed ? new LocalSphinxProvider(runtime.audio, runtime.files) : undefined),
});
