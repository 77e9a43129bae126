import type { EnginePool } from "../../workers/engine-pool.ts";
import type { Config } from "../config.ts";
import { AssemblyAiStt } from "./assemblyai/stt.ts";
import { CartesiaStt } from "./cartesia/stt.ts";
import { CartesiaTts } from "./cartesia/tts.ts";
import { DeepgramStt } from "./deepgram/stt.ts";
import { DeepgramTts } from "./deepgram/tts.ts";
import { LocalEngineProvider } from "./local-engine-provider.ts";
import { ElevenLabsStt } from "./elevenlabs/stt.ts";
import { ElevenLabsTts } from "./elevenlabs/tts.ts";
import { OpenAiStt } from "./openai/stt.ts";
import { OpenAiTts } from "./openai/tts.ts";
import type { SttProvider, TtsProvider } from "./types.ts";
import type { HttpProviderOptions } from "./upstream-http.ts";

/** A cloud provider's connection options, or undefined when neither its key nor its base URL is set. */
function cloudOptions(config: Config, provider: keyof Config["providers"], defaultBaseUrl: string): HttpProviderOptions | undefined {
  const { apiKey, baseUrl } = config.providers[provider];
  if (!apiKey && !baseUrl) return undefined;
  return { apiKey, baseUrl: baseUrl ?? defaultBaseUrl, connectTimeoutMs: config.providerConnectTimeoutMs, idleTimeoutMs: config.upstreamIdleTimeoutMs };
}

const openAiOptions = (config: Config) => cloudOptions(config, "openai", "https://api.openai.com/v1");
const elevenLabsOptions = (config: Config) => cloudOptions(config, "elevenlabs", "https://api.elevenlabs.io");
const cartesiaOptions = (config: Config) => cloudOptions(config, "cartesia", "https://api.cartesia.ai");
const deepgramOptions = (config: Config) => cloudOptions(config, "deepgram", "https://api.deepgram.com");
const when = <O, P>(options: O | undefined, make: (o: O) => P): P[] => (options ? [make(options)] : []);

function compatibleOptions(config: Config): HttpProviderOptions | undefined {
  const c = config.openaiCompatible;
  if (!c) return undefined;
  return { apiKey: c.apiKey, baseUrl: c.baseUrl, connectTimeoutMs: config.providerConnectTimeoutMs, idleTimeoutMs: config.upstreamIdleTimeoutMs };
}

/** The TTS adapters this build has, by provider id: local engines, and cloud providers when configured. */
export function ttsProviders(pool: EnginePool, config: Config): TtsProvider[] {
  return [
    new LocalEngineProvider("flite", "flite", pool),
    new LocalEngineProvider("svox-pico", "svox-pico", pool),
    new LocalEngineProvider("espeak-ng", "espeak-ng", pool),
    ...when(openAiOptions(config), (o) => new OpenAiTts(o)),
    ...when(compatibleOptions(config), (o) => new OpenAiTts(o, "openai-compatible")),
    ...when(elevenLabsOptions(config), (o) => new ElevenLabsTts(o)),
    ...when(cartesiaOptions(config), (o) => new CartesiaTts(o)),
    ...when(deepgramOptions(config), (o) => new DeepgramTts(o)),
  ];
}

/** The cloud STT adapters this build has, when configured (the local recognizer is added by the server). */
export function cloudSttProviders(config: Config): SttProvider[] {
  return [
    ...when(openAiOptions(config), (o) => new OpenAiStt(o)),
    ...when(compatibleOptions(config), (o) => new OpenAiStt(o, "openai-compatible")),
    ...when(deepgramOptions(config), (o) => new DeepgramStt(o)),
    ...when(elevenLabsOptions(config), (o) => new ElevenLabsStt(o)),
    ...when(cartesiaOptions(config), (o) => new CartesiaStt(o)),
    ...when(cloudOptions(config, "assemblyai", "https://api.assemblyai.com"), (o) => new AssemblyAiStt({ ...o, streamingUrl: config.providers.assemblyai.streamingUrl })),
  ];
}
