import type { TtsFormat } from "../catalogue/types.ts";
import type { VoiceCloning } from "./voice-cloning.ts";

// The interfaces every provider implements, local engine or cloud adapter alike (speech to text's
// in stt-types.ts). Providers know nothing of surfaces, credits or our HTTP statuses.

export interface AudioFormat {
  encoding: "pcm_s16le" | "mp3";
  sampleRate: number;
  channels: 1;
}

/**
 * When each character of a text is spoken, in seconds on a stream's audio timeline (0 is its first
 * sample): `chars` are the text's code points in order, `starts` and `ends` their times.
 */
export interface CharacterTimes {
  chars: string[];
  starts: number[];
  ends: number[];
}

/**
 * `alignment` (asked with `TtsStreamRequest.alignment`) times characters of the text written, in
 * order, before the audio they describe goes out; `normalized`, where the provider says so, times
 * the text as it normalized it (numbers spelled out, …). `spoken` marks the end of an utterance.
 */
export type TtsEvent =
  | { type: "audio"; audio: Uint8Array }
  | { type: "flushed" }
  | { type: "alignment"; alignment: CharacterTimes; normalized?: CharacterTimes }
  /**
   * All the audio of the first `chars` characters (code points) written has been yielded: a stream
   * that speaks whole utterances says so after each, so that a session replaced mid-stream knows
   * which text was heard to its end (tts-failover.ts).
   */
  | { type: "spoken"; chars: number };

/** One streaming synthesis. Iterating yields audio as produced and ends after `end()` is honoured. */
export interface TtsStream extends AsyncIterable<TtsEvent> {
  readonly audioFormat: AudioFormat;
  /**
   * Characters (code points) of the text written so far that the provider has been handed: a
   * stream that holds text back (until a sentence is complete, the previous utterance is done or
   * the client has read enough) counts it only once it goes out. Absent when everything written
   * goes straight to the provider. It is what a client that leaves pays for (tts-session.ts).
   */
  readonly given?: number;
  /** More text; the provider may hold it until it has a sentence. */
  write(text: string): void;
  /** Synthesize everything written so far; a `flushed` event follows its audio. */
  flush(): void;
  /** No more text: synthesize the rest, then the iteration ends. */
  end(): void;
  /** Stop now; nothing more is yielded. */
  cancel(): void;
  /**
   * While its consumer waits for the next event, each event is first offered to `take` as it
   * arrives, synchronously: one it takes (true) is not yielded. Undefined stops the offers. Only a
   * stream that queues its events has it: it spares the consumer a promise per audio chunk.
   */
  offerTo?(take: ((event: TtsEvent) => boolean) | undefined): void;
}

export interface TtsStreamRequest {
  /** The provider's own model id. */
  model: string;
  voice?: string;
  format: TtsFormat;
  /**
   * The PCM rate the caller will deliver. A provider that can produce it natively should, so the
   * router passes its audio through instead of resampling it; others produce their own rate.
   */
  sampleRate?: number;
  /** Pace, 1 = natural: the planned speed, for the providers that honour one (their catalogue's `ttsSpeed`). */
  speed?: number;
  /** Provider-native options (`provider_options[...]` and unreserved query keys); a `speed` among them is no number. */
  options: Record<string, string>;
  /** The caller wants character timings: a provider that can time its speech emits `alignment` events. */
  alignment?: boolean;
  /** Someone waits on the line for this speech (a conversation's answer): an embedded engine serves it before bulk sessions. */
  interactive?: boolean;
  /** The text carries SSML `<phoneme>` tags (pronunciation rules; only for a provider whose `phonemes` is `ssml`). */
  ssml?: boolean;
}

/** One of a provider's voices, with what the provider says of it (the voice catalogue, src/voices/, shows it). */
export interface Voice {
  id: string;
  name: string;
  /** BCP 47 tags (`en-US`, `en`) as the provider gives them, the voice's own first. */
  languages: string[];
  gender?: string;
  description?: string;
  accent?: string;
  /** A public audio sample the provider hosts (the embedded engines have none: the router serves theirs). */
  previewUrl?: string;
  /** `official` (default): made by the provider; `community`: shared by its users or added to the account. */
  category?: "official" | "community";
  /** Other descriptive labels the provider gives (`age`, `use_case`, …), facet → value. */
  labels?: Record<string, string>;
  /** Where the voice comes from (its recordings, its engine's project). */
  sourceUrls?: string[];
}

export interface TtsProvider {
  readonly id: string;
  /**
   * An engine of this process's own worker pools: slow to accept only when busy (its sessions wait
   * their turn there), never because it is down, so its opening is not held to the connect timeout.
   */
  readonly embedded?: boolean;
  /** Resolves once the provider accepted the session (handshake done); rejects with `ProviderError`. */
  open(req: TtsStreamRequest): Promise<TtsStream>;
  voices(): Promise<Voice[]>;
  /**
   * Every name the provider takes as a voice, when it knows them all (the embedded engines): a
   * voice outside it is refused before any session starts. Providers whose voices cannot be listed
   * completely and cheaply leave it out, and their own answer decides.
   */
  voiceNames?(): Promise<ReadonlySet<string>>;
  /** Voice cloning through the provider's own API, where it has one. */
  readonly cloning?: VoiceCloning;
  /** How it takes a pronunciation rule's phonemes: `ssml`, inline `<phoneme>` tags; absent, not at all (docs/pronunciation.md). */
  readonly phonemes?: PhonemeSupport;
}

export type PhonemeSupport = "ssml";
