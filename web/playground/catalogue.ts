// What `/v1/providers` and `/v1/voices` answer, as far as the playground reads them.

export interface ModelEntry {
  id: string;
  canonical: string;
  streaming: boolean;
}

export interface ProviderEntry {
  name: string;
  requires_voice?: boolean;
  defaults: { tts?: { model: string; voice?: string }; stt?: { model: string } };
  tts: ModelEntry[];
  stt: ModelEntry[];
}

export type Providers = Record<string, ProviderEntry>;

export interface VoiceEntry {
  model: { id: string; name: string };
  voice: {
    id: string;
    name: string;
    description: string;
    preview_url: string | null;
    languages: { name: string; locale: string | null }[];
    labels: { facet: { id: string }; value: { name: string } }[];
  };
  providers: { id: string; name: string; provider_model_id: string }[];
}

export interface Facet {
  id: string;
  name: string;
  values: { id: string; name: string; count: number }[];
}

export interface VoicePage {
  voices: VoiceEntry[];
  total_count: number;
  next_cursor: string | null;
  facets?: Facet[];
}

/** What the TTS form speaks with: chosen there, or picked in the voice browser. */
export interface Speaker {
  provider: string;
  model: string;
  voice: string;
}
