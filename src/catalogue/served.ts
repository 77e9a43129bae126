import type { Config } from "../config.ts";
import type { CatalogueData } from "./catalogue.ts";
import { ASSEMBLYAI, ASSEMBLYAI_MODELS } from "./data/assemblyai.ts";
import { CARTESIA, CARTESIA_MODELS } from "./data/cartesia.ts";
import { DEEPGRAM, DEEPGRAM_MODELS } from "./data/deepgram.ts";
import { ELEVENLABS, ELEVENLABS_MODELS } from "./data/elevenlabs.ts";
import { ESPEAK_NG, FLITE, LOCAL_MODELS, POCKETSPHINX, SVOX_PICO } from "./data/local.ts";
import { OPENAI, OPENAI_MODELS } from "./data/openai.ts";

export const ALL_MODELS = [...LOCAL_MODELS, ...ELEVENLABS_MODELS, ...OPENAI_MODELS, ...DEEPGRAM_MODELS, ...CARTESIA_MODELS, ...ASSEMBLYAI_MODELS];

/**
 * What this deployment can actually serve: local engines always (eSpeak NG only when opted in,
 * PocketSphinx only when installed), a cloud provider only when its key or base URL is configured.
 */
export function servedCatalogue(config: Config, localStt = false): CatalogueData {
  const cloud = (spec: typeof ELEVENLABS, creds: { apiKey?: string; baseUrl?: string }) =>
    creds.apiKey || creds.baseUrl ? [spec] : [];
  const p = config.providers;
  return {
    providers: [
      FLITE,
      SVOX_PICO,
      ...(config.espeakEnabled ? [ESPEAK_NG] : []),
      ...(localStt ? [POCKETSPHINX] : []),
      ...cloud(ELEVENLABS, p.elevenlabs),
      ...cloud(OPENAI, p.openai),
      ...cloud(DEEPGRAM, p.deepgram),
      ...cloud(CARTESIA, p.cartesia),
      ...cloud(ASSEMBLYAI, p.assemblyai),
    ],
    models: ALL_MODELS,
  };
}
