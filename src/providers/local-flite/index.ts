import { defineProvider } from "../home.ts";
import { localEngineAdapter, localEngineSpec } from "../local-engine-home.ts";

export const FLITE_MODEL = { canonical: "cmu/flite", name: "Flite", capability: "tts" as const, aliases: ["flite-1"] };

export const FLITE = localEngineSpec("flite", { name: "Flite (embedded)", model: FLITE_MODEL, modelId: "flite", voice: "slt", ttsSpeed: true, price: { amount: "0.0000125", per: "character" } });

/** Flite is always served: it needs nothing but its WASM build. */
export const flite = defineProvider({
  id: "flite",
  settings: () => ({}),
  catalogue: () => ({ providers: [FLITE], models: [FLITE_MODEL] }),
  tts: localEngineAdapter("flite"),
});
