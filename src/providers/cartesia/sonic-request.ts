import { ProviderError } from "../../errors.ts";
import type { TtsStreamRequest } from "../types.ts";

// The part of a Sonic generation request that both transports send: `POST /tts/bytes` bodies and
// `/tts/websocket` generation messages are the same JSON apart from transcript and context.

/** Raw PCM rate asked of Sonic. */
export const SONIC_PCM_RATE = 24000;
export const SONIC_RAW_PCM = { container: "raw", encoding: "pcm_s16le", sample_rate: SONIC_PCM_RATE } as const;

const GENERATION_CONFIG = ["speed", "volume"] as const;

/**
 * `model_id`, `voice` (as `{"mode":"id","id":…}`, the form every API version accepts),
 * `output_format`, the planned speed, and the provider options `volume` (a number; a `speed` left
 * among them is none) and `emotion` into
 * `generation_config` (Sonic 3), `language`. Bad values are refused before anything is sent.
 */
export function sonicRequest(req: TtsStreamRequest, outputFormat: Record<string, unknown>): Record<string, unknown> {
  if (!req.voice) throw new ProviderError("cartesia needs a voice id", false);
  const options = req.options;
  const config: Record<string, unknown> = {};
  for (const key of GENERATION_CONFIG) {
    if (options[key] === undefined) continue;
    if (!Number.isFinite(Number(options[key]))) throw new ProviderError(`cartesia option ${key} must be a number, not ${JSON.stringify(options[key])}`, false);
    config[key] = Number(options[key]);
  }
  if (req.speed !== undefined) config.speed = req.speed;
  if (options.emotion) config.emotion = options.emotion;
  return {
    model_id: req.model,
    voice: { mode: "id", id: req.voice },
    output_format: outputFormat,
    ...(Object.keys(config).length ? { generation_config: config } : {}),
    ...(options.language ? { language: options.language } : {}),
  };
}
