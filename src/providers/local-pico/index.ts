import { defineProvider, type EnvReader } from "../home.ts";
import { localEngineAdapter, localEngineSpec } from "../local-engine-home.ts";
import { picoOffer } from "./availability.ts";
import { PICO_VOICES } from "./voices.ts";
import { embeddedPicoDir } from "./embedded.ts";

export const PICO_MODEL = { canonical: "svox/pico", name: "SVOX Pico", capability: "tts" as const, aliases: ["svox-pico", "pico-tts"] };

export const SVOX_PICO = localEngineSpec("svox-pico", {
  name: "SVOX Pico (embedded)",
  // Pico has no built-in voice: the voice names the language resource pair to load.
  requiresVoice: true,
  model: PICO_MODEL,
  modelId: "pico",
  voice: "en-US",
  ttsSpeed: true,
  price: { amount: "0.0000125", per: "character" },
});

/** The public AOSP copy of Pico's lingware, pinned to a commit. */
export const DEFAULT_PICO_VOICES_URL = "https://raw.githubusercontent.com/jpwhiting/svox-pico/14cb2a5a01e1d027b2d7a9524fee88ea621b27ef/pico/lang";

const settings = (env: EnvReader) => ({
  voicesDir: env.text("PICO_VOICES_DIR") || embeddedPicoDir() || "./data/pico-voices",
  /** Where missing voice files are fetched from on first use; empty disables fetching. */
  voicesUrl: env.text("PICO_VOICES_URL") ?? DEFAULT_PICO_VOICES_URL,
});

/** Pico with its default voice among those offered, or nothing when none is. */
function served(voices: readonly string[]) {
  if (voices.length === 0) return [];
  const tts = SVOX_PICO.defaults.tts!;
  return [{ ...SVOX_PICO, defaults: { tts: { ...tts, voice: voices.includes(tts.voice!) ? tts.voice : voices[0] } } }];
}

/** SVOX Pico, with the voices whose files are present or fetchable (start-up probes them). */
export const svoxPico = defineProvider({
  id: "svox-pico",
  settings,
  async probe({ voicesDir, voicesUrl }, log): Promise<readonly string[]> {
    const offer = await picoOffer(voicesDir, voicesUrl);
    for (const { voice, reason } of offer.refused) log.warn({ voice, reason }, "SVOX Pico voice not offered");
    if (offer.voices.length === 0) log.warn("SVOX Pico not offered: none of its voices is present or fetchable");
    return offer.voices;
  },
  unprobed: PICO_VOICES.map((v) => v.id),
  catalogue: (_settings, voices) => ({ providers: served(voices), models: [PICO_MODEL] }),
  engineOptions: ({ voicesDir, voicesUrl }, voices) => ({ picoVoicesDir: voicesDir, picoVoicesUrl: voicesUrl, picoVoices: [...voices] }),
  tts: localEngineAdapter("svox-pico"),
});
