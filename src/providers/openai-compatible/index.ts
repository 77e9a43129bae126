import type { CatalogueData } from "../../catalogue/catalogue.ts";
import { declareCloud } from "../../catalogue/declare.ts";
import { connection } from "../cloud-home.ts";
import { defineProvider, NOTHING, type EnvReader } from "../home.ts";
import { OpenAiStt } from "../openai/stt.ts";
import { OpenAiTts } from "../openai/tts.ts";

// An operator's own OpenAI-compatible server (Kokoro, Speaches, …), served by the OpenAI
// adapters: its models and prices are declared in the environment, not known here.

const ID = "openai-compatible";

export interface OpenAiCompatibleSettings {
  baseUrl: string;
  apiKey?: string;
  ttsModels: string[];
  sttModels: string[];
  /** USD per 1000 characters / per minute; unset = unpriced (requests answer 422 model_not_priced). */
  ttsPrice?: string;
  sttPrice?: string;
}

function settings(env: EnvReader): OpenAiCompatibleSettings | undefined {
  const baseUrl = env.url("OPENAI_COMPATIBLE_BASE_URL");
  if (!baseUrl) return undefined;
  return {
    baseUrl,
    apiKey: env.text("OPENAI_COMPATIBLE_API_KEY") || undefined,
    ttsModels: env.list("OPENAI_COMPATIBLE_TTS_MODELS"),
    sttModels: env.list("OPENAI_COMPATIBLE_STT_MODELS"),
    ttsPrice: env.usd("OPENAI_COMPATIBLE_TTS_PRICE"),
    sttPrice: env.usd("OPENAI_COMPATIBLE_STT_PRICE"),
  };
}

function catalogue(c: OpenAiCompatibleSettings | undefined): CatalogueData {
  if (!c) return NOTHING;
  const ttsPrice = c.ttsPrice ? { amount: c.ttsPrice, per: "1000 characters" as const } : undefined;
  const sttPrice = c.sttPrice ? { amount: c.sttPrice, per: "minute" as const } : undefined;
  const { spec, models } = declareCloud(ID, {
    name: `OpenAI-compatible (${new URL(c.baseUrl).host})`,
    requiresVoice: true,
    ttsSpeed: true,
    defaults: {
      ...(c.ttsModels[0] ? { tts: { model: c.ttsModels[0] } } : {}),
      ...(c.sttModels[0] ? { stt: { model: c.sttModels[0] } } : {}),
    },
    tts: c.ttsModels.map((id) => ({ id, name: id, formats: ["pcm", "mp3"], price: ttsPrice })),
    stt: c.sttModels.map((id) => ({ id, name: id, streaming: false, synchronous: true, batch: false, price: sttPrice })),
  });
  return { providers: [spec], models };
}

export const openaiCompatible = defineProvider({
  id: ID,
  settings,
  catalogue,
  tts: (c, runtime) => (c ? new OpenAiTts(connection(c, c.baseUrl, runtime)!, ID) : undefined),
  stt: (c, runtime) => (c ? new OpenAiStt(connection(c, c.baseUrl, runtime)!, ID) : undefined),
});
