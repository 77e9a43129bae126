import type { CatalogueData } from "../../src/catalogue/catalogue.ts";
import type { BindingSpec } from "../../src/catalogue/types.ts";

/**
 * The catalogue of a fake cloud provider `id` (named `name`) serving one binding, whose model
 * (named `modelName`) is its default: what a test or bench server needs to route to that fake.
 */
export function oneBindingCatalogue(id: string, name: string, requiresVoice: boolean, binding: BindingSpec, modelName: string): CatalogueData {
  return {
    providers: [{ id, name, kind: "cloud", requiresVoice, defaults: { [binding.capability]: { model: binding.id } }, bindings: [binding] }],
    models: [{ canonical: binding.canonical, name: modelName, capability: binding.capability, aliases: [] }],
  };
}

/** A streaming STT binding of 16 kHz PCM at $0.006 a minute, as the fake recognizers serve. */
export function streamingSttBinding(id: string, canonical: string): BindingSpec {
  return { capability: "stt", id, canonical, streaming: true, synchronous: false, inputFormats: ["pcm_16000"], price: { amount: "0.006", per: "minute" } };
}
