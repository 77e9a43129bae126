import { ProviderError } from "../../errors.ts";
import type { TtsStreamRequest } from "../types.ts";

/** Aura's linear16 rates; 24 kHz unless the caller delivers another of them. */
const AURA_PCM_RATES = [8000, 16000, 24000, 32000, 48000];

export function auraPcmRate(req: TtsStreamRequest): number {
  return req.sampleRate && AURA_PCM_RATES.includes(req.sampleRate) ? req.sampleRate : 24000;
}

/**
 * What every Aura request carries, over HTTP or the WebSocket: the voice folded into Deepgram's
 * model name (model `aura-2` + voice `thalia-en` is `aura-2-thalia-en`) and the `speed` option.
 */
export function auraQuery(req: TtsStreamRequest): URLSearchParams {
  if (!req.voice) throw new ProviderError("deepgram needs a voice (e.g. thalia-en)", false);
  const query = new URLSearchParams({ model: `${req.model}-${req.voice}` });
  // A speed option left among the options is no number (the planner carries a number as `speed`).
  if (req.options.speed) throw new ProviderError(`deepgram option speed must be a number, not ${JSON.stringify(req.options.speed)}`, false);
  if (req.speed !== undefined) query.set("speed", String(req.speed));
  return query;
}
