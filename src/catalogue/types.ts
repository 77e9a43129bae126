// The shape of the declarative catalogue: providers, the models they serve (bindings), prices.

export type Capability = "tts" | "stt";

/** Output containers a TTS binding can produce. */
export type TtsFormat = "pcm" | "mp3" | "opus" | "aac" | "flac" | "wav" | "ulaw";

/** Audio a streaming STT binding can take: PCM at a rate, or 8 kHz μ-law. */
export type SttAudioFormat = "pcm_8000" | "pcm_16000" | "pcm_22050" | "pcm_24000" | "pcm_44100" | "pcm_48000" | "ulaw_8000";

/** An MP3 stream's sample rate, and its bit rate where it is fixed. */
export interface Mp3Format {
  sampleRate: number;
  kbps?: number;
}

/** The unit a provider publishes its price in; normalized to per-character / per-second for billing. */
export type PriceUnit = "character" | "1000 characters" | "1000000 characters" | "second" | "minute" | "hour";

export interface PriceSpec {
  /** Decimal string in USD, exactly as the provider publishes it. */
  amount: string;
  per: PriceUnit;
  /** Optional fixed fee per request, decimal USD. */
  requestPrice?: string;
}

export interface BindingSpec {
  capability: Capability;
  /** The provider's own model id. */
  id: string;
  /** Canonical `{author}/{modelName}` slug of the model this binding serves. */
  canonical: string;
  streaming: boolean;
  synchronous: boolean;
  /** STT only: the provider queues the synchronous file request internally. */
  batch?: boolean;
  formats?: TtsFormat[];
  /** STT only: the `audio_format` values the binding accepts. */
  inputFormats?: string[];
  instructions?: { mode: string; honored: boolean };
  price?: PriceSpec;
}

export interface ModelSpec {
  canonical: string;
  name: string;
  capability: Capability;
  aliases: string[];
  /** The operator's voice aliases on this model (alias → the voice it stands for), set by `Catalogue` from VOICE_ALIASES / ALIASES_FILE. */
  voiceAliases?: ReadonlyMap<string, string>;
}

export interface ProviderSpec {
  id: string;
  name: string;
  /** `local` engines are always offered; `cloud` providers only when configured. */
  kind: "local" | "cloud";
  requiresVoice: boolean;
  /** What cloning a voice through the provider costs the tenant, decimal USD, charged once on success; absent where the provider cannot clone. */
  cloneFee?: string;
  /**
   * TTS: the provider honours the `speed` provider option (its own speed parameter): `true` for
   * whatever it accepts (it refuses the rest itself), or only within a range; absent where speech
   * cannot be made faster or slower.
   */
  ttsSpeed?: true | { min: number; max: number };
  /**
   * TTS: the MP3 its adapter streams for a session's `mp3`, where it is always the same; a caller
   * asking for exactly that MP3 gets the provider's bytes untouched. Absent where it varies or is
   * not known (the embedded engines' follows each voice's rate): MP3 is then encoded from its PCM.
   */
  ttsMp3?: Mp3Format;
  defaults: {
    tts?: { model: string; voice?: string };
    stt?: { model: string; synchronousModel?: string };
  };
  bindings: BindingSpec[];
}

/** A provider × model pair the router can choose. */
export interface Binding extends BindingSpec {
  provider: ProviderSpec;
  model: ModelSpec;
}
