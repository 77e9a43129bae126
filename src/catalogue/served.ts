import type { Config } from "../config.ts";
import type { CatalogueData } from "./catalogue.ts";
import type { ModelSpec, ProviderSpec } from "./types.ts";
import { ASSEMBLYAI, ASSEMBLYAI_MODELS } from "./data/assemblyai.ts";
import { CARTESIA, CARTESIA_MODELS } from "./data/cartesia.ts";
import { DEEPGRAM, DEEPGRAM_MODELS } from "./data/deepgram.ts";
import { ELEVENLABS, ELEVENLABS_MODELS } from "./data/elevenlabs.ts";
import { ESPEAK_NG, FLITE, LOCAL_MODELS, POCKETSPHINX, SVOX_PICO } from "./data/local.ts";
import { OPENAI, OPENAI_MODELS } from "./data/openai.ts";
import { PICO_VOICES } from "../providers/local-pico/voices.ts";

export const ALL_MODELS = [...LOCAL_MODELS, ...ELEVENLABS_MODELS, ...OPENAI_MODELS, ...DEEPGRAM_MODELS, ...CARTESIA_MODELS, ...ASSEMBLYAI_MODELS];

/** An operator's OpenAI-compatible server, as catalogue data built from its configuration. */
function openaiCompatible(config: Config): CatalogueData {
  const c = config.openaiCompatible;
  if (!c) return { providers: [], models: [] };
  const canonical = (id: string) => `openai-compatible/${id}`;
  const models: ModelSpec[] = [
    ...c.ttsModels.map((id) => ({ canonical: canonical(id), name: id, capability: "tts" as const, aliases: [] })),
    ...c.sttModels.map((id) => ({ canonical: canonical(id), name: id, capability: "stt" as const, aliases: [] })),
  ];
  const provider: ProviderSpec = {
    id: "openai-compatible",
    name: `OpenAI-compatible (${new URL(c.baseUrl).host})`,
    kind: "cloud",
    requiresVoice: true,
    defaults: {
      ...(c.ttsModels[0] ? { tts: { model: c.ttsModels[0] } } : {}),
      ...(c.sttModels[0] ? { stt: { model: c.sttModels[0] } } : {}),
    },
    bindings: [
      ...c.ttsModels.map((id) => ({
        capability: "tts" as const,
        id,
        canonical: canonical(id),
        streaming: true,
        synchronous: true,
        formats: ["pcm" as const, "mp3" as const],
        ...(c.ttsPrice ? { price: { amount: c.ttsPrice, per: "1000 characters" as const } } : {}),
      })),
      ...c.sttModels.map((id) => ({
        capability: "stt" as const,
        id,
        canonical: canonical(id),
        streaming: false,
        synchronous: true,
        batch: false,
        ...(c.sttPrice ? { price: { amount: c.sttPrice, per: "minute" as const } } : {}),
      })),
    ],
  };
  return { providers: [provider], models };
}

/** What start-up found the embedded engines can do on this machine. */
export interface LocalAvailability {
  /** PocketSphinx and its model are installed. */
  stt: boolean;
  /** Pico voices whose files are present or fetchable. */
  picoVoices: readonly string[];
}

/** Pico with its default voice among those offered, or nothing when none is. */
function svoxPico(voices: readonly string[]): ProviderSpec[] {
  if (voices.length === 0) return [];
  const tts = SVOX_PICO.defaults.tts!;
  return [{ ...SVOX_PICO, defaults: { tts: { ...tts, voice: voices.includes(tts.voice!) ? tts.voice : voices[0] } } }];
}

/**
 * What this deployment can actually serve: Flite always, Pico with the voices it can load, eSpeak
 * NG only when opted in, PocketSphinx only when installed, a cloud provider only when its key or
 * base URL is configured.
 */
export function servedCatalogue(config: Config, local: LocalAvailability = { stt: false, picoVoices: PICO_VOICES.map((v) => v.id) }): CatalogueData {
  const cloud = (spec: typeof ELEVENLABS, creds: { apiKey?: string; baseUrl?: string }) =>
    creds.apiKey || creds.baseUrl ? [spec] : [];
  const p = config.providers;
  const compatible = openaiCompatible(config);
  return {
    providers: [
      FLITE,
      ...svoxPico(local.picoVoices),
      ...(config.espeakEnabled ? [ESPEAK_NG] : []),
      ...(local.stt ? [POCKETSPHINX] : []),
      ...cloud(ELEVENLABS, p.elevenlabs),
      ...cloud(OPENAI, p.openai),
      ...cloud(DEEPGRAM, p.deepgram),
      ...cloud(CARTESIA, p.cartesia),
      ...cloud(ASSEMBLYAI, p.assemblyai),
      ...compatible.providers,
    ],
    models: [...ALL_MODELS, ...compatible.models],
  };
}
