import type { EnginePool } from "../../workers/engine-pool.ts";
import type { Config } from "../config.ts";
import { DeepgramStt } from "./deepgram/stt.ts";
import { DeepgramTts } from "./deepgram/tts.ts";
import { LocalEngineProvider } from "./local-engine-provider.ts";
import { ElevenLabsTts } from "./elevenlabs/tts.ts";
import { OpenAiStt } from "./openai/stt.ts";
import { OpenAiTts, type OpenAiOptions } from "./openai/tts.ts";
import type { SttProvider, TtsProvider } from "./types.ts";

function openAiOptions(config: Config): OpenAiOptions | undefined {
  const { apiKey, baseUrl } = config.providers.openai;
  if (!apiKey && !baseUrl) return undefined;
  return { apiKey, baseUrl: baseUrl ?? "https://api.openai.com/v1", connectTimeoutMs: config.providerConnectTimeoutMs, idleTimeoutMs: config.upstreamIdleTimeoutMs };
}

function compatibleOptions(config: Config): OpenAiOptions | undefined {
  const c = config.openaiCompatible;
  if (!c) return undefined;
  return { apiKey: c.apiKey, baseUrl: c.baseUrl, connectTimeoutMs: config.providerConnectTimeoutMs, idleTimeoutMs: config.upstreamIdleTimeoutMs };
}

/** The TTS adapters this build has, by provider id: local engines, and cloud providers when configured. */
export function ttsProviders(pool: EnginePool, config: Config): TtsProvider[] {
  const openai = openAiOptions(config);
  const { elevenlabs: el, deepgram: dg } = config.providers;
  const timeouts = { connectTimeoutMs: config.providerConnectTimeoutMs, idleTimeoutMs: config.upstreamIdleTimeoutMs };
  return [
    new LocalEngineProvider("flite", "flite", pool),
    new LocalEngineProvider("svox-pico", "svox-pico", pool),
    new LocalEngineProvider("espeak-ng", "espeak-ng", pool),
    ...(openai ? [new OpenAiTts(openai)] : []),
    ...(compatibleOptions(config) ? [new OpenAiTts(compatibleOptions(config)!, "openai-compatible")] : []),
    ...(el.apiKey || el.baseUrl
      ? [new ElevenLabsTts({ apiKey: el.apiKey, baseUrl: el.baseUrl ?? "https://api.elevenlabs.io", ...timeouts })]
      : []),
    ...(dg.apiKey || dg.baseUrl ? [new DeepgramTts({ apiKey: dg.apiKey, baseUrl: dg.baseUrl ?? "https://api.deepgram.com", ...timeouts })] : []),
  ];
}

/** The cloud STT adapters this build has, when configured (the local recognizer is added by the server). */
export function cloudSttProviders(config: Config): SttProvider[] {
  const openai = openAiOptions(config);
  const compatible = compatibleOptions(config);
  const dg = config.providers.deepgram;
  return [
    ...(openai ? [new OpenAiStt(openai)] : []),
    ...(compatible ? [new OpenAiStt(compatible, "openai-compatible")] : []),
    ...(dg.apiKey || dg.baseUrl ? [new DeepgramStt({ apiKey: dg.apiKey, baseUrl: dg.baseUrl ?? "https://api.deepgram.com" })] : []),
  ];
}
