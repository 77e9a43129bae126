import type { Mp3Format } from "../catalogue/types.ts";
import type { Candidate, ModelChoice } from "../routing/candidate.ts";
import type { ProviderPreferences } from "../routing/preferences.ts";

/**
 * A text-to-speech request as every surface builds it from its own wire form (the `/v1/tts`
 * query, OpenAI's and ElevenLabs' bodies, a realtime profile's TTS stage). The provider
 * preferences choose among each model's providers; `fallbacks` chains other models after them.
 */
export interface TtsRequest {
  /** Bare provider id, canonical slug, alias, or `{provider}/{id}`. */
  model?: string;
  /** Pins one provider. */
  provider?: string;
  voice?: string;
  format: TtsFormatAsked;
  /** Pace, 1 = natural; other values go only to providers that honour them. */
  speed?: number;
  /** Provider-native options, passed to the provider as they are. */
  options: Record<string, string>;
  preferences: ProviderPreferences;
  /** Models tried after the primary's providers, each with its own voice (at most `MAX_FALLBACKS`). */
  fallbacks?: ModelChoice[];
}

/**
 * What the session must carry: exactly `pcm` or `mp3`, or an MP3 the surface can also encode from
 * PCM (`mp3`: the rate, and the bitrate where the API names one). `requireMp3Provider` refuses
 * such an MP3 when no allowed provider emits MP3 at all (ElevenLabs' stream-input contract).
 */
export type TtsFormatAsked = "pcm" | "mp3" | { mp3: Mp3Format; requireMp3Provider?: boolean };

/** A planned TTS request: what a TTS session is opened with. */
export interface TtsPlan {
  /** In the order they are tried, each with its voice; not yet checked against the voice's owner or the balance. */
  candidates: Candidate[];
  /** The primary model's voice (a fallback model's candidates carry their own). */
  voice?: string;
  /** What the session carries: `mp3` for the providers' own MP3, passed through untouched. */
  format: "pcm" | "mp3";
  /** Pace, 1 = natural, a number: the request's `speed`, else a `speed` provider option that is a number (`speedOfOptions`). */
  speed?: number;
  /** The provider options, without the speed. */
  options: Record<string, string>;
}
