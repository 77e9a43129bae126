import type { SttAudioFormat } from "../catalogue/types.ts";
import type { PortableValues } from "../providers/stt-types.ts";
import type { Candidate, ModelChoice } from "../routing/candidate.ts";
import type { ProviderPreferences } from "../routing/preferences.ts";
import type { SttSessionParams } from "../sessions/stt-events.ts";

/** The audio a streaming STT session takes: PCM at a rate, or 8 kHz μ-law. */
export const AUDIO_FORMATS: SttAudioFormat[] = ["pcm_8000", "pcm_16000", "pcm_22050", "pcm_24000", "pcm_44100", "pcm_48000", "ulaw_8000"];

/**
 * A streaming speech-to-text request as every surface builds it from its own wire form (the
 * `/v1/stt` query, a realtime profile's STT stage, OpenAI's transcription session, a file
 * streamed to a recognizer). The provider preferences choose among each model's providers;
 * `fallbacks` chains other models after them.
 */
export interface SttRequest {
  /** Bare provider id, canonical slug, alias, or `{provider}/{id}`. */
  model?: string;
  /** Pins one provider. */
  provider?: string;
  /** What the client's audio is; required. */
  audioFormat?: SttAudioFormat;
  /** Interleaved channels, 1 to 8 (default 1). */
  channels?: number;
  commitStrategy?: "auto" | "manual";
  turnDetection?: "auto" | "acoustic" | "semantic";
  /** `provider`: the provider's own events, relayed (a passthrough session). */
  eventFormat?: "normalized" | "provider";
  /** The portable options the client gave (language, turn and VAD settings, interim results …). */
  portable: PortableValues;
  /** Provider-native options, passed to the provider as they are. */
  options: Record<string, string>;
  preferences: ProviderPreferences;
  /** Models tried after the primary's providers (`{model}` only: speech to text has no voice). */
  fallbacks?: ModelChoice[];
}

/** A planned STT request: what an STT session (or the passthrough) is opened with. */
export interface SttPlan extends SttSessionParams {
  /** In the order they are tried, each one whose family can honour the request. */
  candidates: Candidate[];
  eventFormat: "normalized" | "provider";
}
