import { defineProvider } from "../home.ts";
import { localEngineAdapter, localEngineSpec } from "../local-engine-home.ts";
import { ESPEAK_SPEEDS } from "./engine.ts";

export const ESPEAK_MODEL = { canonical: "espeak/espeak-ng", name: "eSpeak NG", capability: "tts" as const, aliases: ["espeak"] };

export const ESPEAK_NG = localEngineSpec("espeak-ng", {
  name: "eSpeak NG (embedded, GPL-3.0, opt-in)",
  model: ESPEAK_MODEL,
  modelId: "espeak-ng",
  voice: "en-us",
  ttsSpeed: ESPEAK_SPEEDS,
  price: { amount: "0.00001", per: "character" },
});

/** eSpeak NG is GPL-3.0: served only when an operator opts in (ESPEAK_ENABLED). */
export const espeakNg = defineProvider({
  id: "espeak-ng",
  settings: (env) => ({ enabled: env.flag("ESPEAK_ENABLED") }),
  catalogue: ({ enabled }) => ({ providers: enabled ? [ESPEAK_NG] : [], models: [ESPEAK_MODEL] }),
  tts: localEngineAdapter("espeak-ng"),
});
