import type { SttAudioFormat, TtsFormat } from "../catalogue/types.ts";
import type { ProviderOverloaded } from "../errors.ts";
import type { VoiceCloning } from "./voice-cloning.ts";

// The interfaces every provider implements, local engine or cloud adapter alike. Providers know
// nothing of surfaces, credits or our HTTP statuses.

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

// ---- Speech to text ----

/** Portable STT options a family may be able to translate into its own terms. */
export type PortableSttOption =
  | "language"
  | "silence_duration_ms"
  | "min_speech_duration_ms"
  | "min_silence_duration_ms"
  | "turn_timeout_ms"
  | "speech_threshold"
  | "turn_threshold"
  | "eager_end_threshold"
  | "interim_results"
  | "include_timestamps"
  | "include_language_detection"
  | "diarization"
  | "formatting"
  | "include_filler_words"
  | "keyterms"
  | "context";

/** What a model family is, as data: the session and the query rules read it, never a provider's code. */
export interface SttFamily {
  name: string;
  /** Explicit portable options it can honour (router VAD options count when the router VAD serves it). */
  portableOptions: PortableSttOption[];
  /** The provider's own turn detector; `none` means the router VAD decides turns. */
  turnDetector: "none" | "acoustic" | "semantic";
  /**
   * With `turnDetector: none`: the recognizer runs the router VAD itself, beside its decoder in the
   * same audio worker (the audio crosses once), and takes its settings as `routerVad`. The stream
   * of any other such family is wrapped in the router's turns by the session (`withRouterTurns`).
   */
  routerVadInside?: boolean;
  /** Turn styles a client may ask for, the first being the default. */
  turnStyles: ("acoustic" | "semantic")[];
  /** Whether its client grammar has a commit/finalize frame (no commit frame: semantic turns only). */
  commitFrame: boolean;
  /** `interim_results` when the client does not say. */
  interimDefault: boolean;
  inputFormats: SttAudioFormat[];
  /** Native option names that declare the audio (a provider_options value must agree with audio_format). */
  audioOptions: {
    encoding?: string;
    sampleRate?: string;
    channels?: string;
    /** The encoding option's values for `pcm_*` and `ulaw_8000` (default `linear16` / `mulaw`). */
    encodingValues?: { pcm: string; ulaw: string };
  };
  /** A direct upstream realtime WebSocket exists (needed by event_format=provider). */
  passthrough: boolean;
  /** Numeric portable options it takes only within a narrower range than the portable one. */
  optionRanges?: Partial<Record<PortableSttOption, [min: number, max: number]>>;
  /**
   * The provider wants audio no faster than it was spoken, also when a recorded file is streamed
   * to it: such a file is sent in real time. Others take a file's audio as fast as it can be sent.
   */
  realtimeInput?: boolean;
}

export interface SttStreamRequest {
  model: string;
  audioFormat: SttAudioFormat;
  channels: number;
  language?: string;
  interim: boolean;
  commitStrategy: "auto" | "manual";
  /** The turn style the client asked for (`auto`: the family's default). */
  turnDetection?: "auto" | "acoustic" | "semantic";
  /** Router VAD settings, for a family that runs the router VAD inside its recognizer (`routerVadInside`). */
  routerVad?: import("../audio/vad.ts").VadOptions;
  /** With `routerVad`: the stream also tells the VAD's speech probability (`vad` events). */
  vadScores?: boolean;
  /** The portable options the client gave explicitly, for the family to translate. */
  portable?: PortableValues;
  options: Record<string, string>;
  /** Aborted when the session is given up while opening: what was taken for it is let go. */
  signal?: AbortSignal;
}

export type PortableValues = Partial<Record<Exclude<PortableSttOption, "keyterms">, string | number | boolean>> & { keyterms?: string[] };

/** The internal STT vocabulary: providers map their events onto it; the session adds ids and seq. */
export type SttEvent =
  | {
      type: "signal";
      origin: "provider" | "router";
      /** `eager_end` / `resumed`: a semantic detector's early guess that the turn ended, and its retraction. */
      signal: "started" | "end" | "eager_end" | "resumed";
      /** `turn` for a semantic detector's whole-turn decisions; `utterance` (default) for acoustic ones. */
      scope?: "utterance" | "turn";
      atMs: number;
    }
  | { type: "transcript"; final: boolean; text: string; startMs: number; endMs: number }
  | { type: "committed"; origin: "client" | "router" | "provider"; atMs: number }
  | { type: "cleared"; atMs: number }
  /** The router VAD's speech probability (0–1) of the audio up to `atMs`, a few a second; only when asked for (`vadScores`). */
  | { type: "vad"; score: number; atMs: number };

export interface SttStream extends AsyncIterable<SttEvent> {
  /** Raw audio exactly as the client sent it; the stream may take ownership of the buffer. */
  send(audio: Uint8Array): void;
  commit(): void;
  clear(): void;
  /** No more audio: flush, deliver the final events, then the iteration ends. */
  end(): void;
  cancel(): void;
  /** Bytes sent that have not gone out to the provider yet (its socket's send buffer): what a recording's pace waits on. */
  readonly bufferedAmount: number;
}

export interface TranscriptionRequest {
  model: string;
  bytes: Uint8Array;
  /** The container as probed (`WAVE`, `MPEG`, `FLAC`, `Ogg`, …). */
  container: string;
  mimeType?: string;
  language?: string;
  /** The file's billed seconds, which the request holds credits for: a provider that decodes the file gives its recognizer no more audio than this. */
  seconds: number;
  /** Aborted when the client left: the provider lets go of the file's transcription (its request cancelled, its worker released). */
  signal?: AbortSignal;
  /**
   * A provider that gives its recognizer the file a piece at a time tells how many seconds of it
   * the recognizer has had so far: a client that leaves is billed that, not the whole file.
   */
  given?(seconds: number): void;
}

export interface TranscriptSegment {
  text: string;
  start_ms: number;
  end_ms: number;
}

export interface Transcription {
  text: string;
  segments: TranscriptSegment[];
}

/** A provider's own realtime WebSocket, for `event_format=provider`: frames pass as they are. */
export interface RawUpstream {
  send(frame: string | Uint8Array): void;
  onFrame(listener: (frame: string | Uint8Array) => void): void;
  onClose(listener: (code: number, reason: string) => void): void;
  close(code?: number, reason?: string): void;
  /** Bytes of audio a client text frame carries, for protocols that send audio as base64 in JSON (metering). */
  audioBytes?(frame: string): number;
}

/** `SttProvider.family` for an adapter that streams one family: the models `streams` accepts are of it. */
export const oneFamily =
  (family: SttFamily, streams: (model: string) => boolean) =>
  (model: string): SttFamily | undefined =>
    streams(model) ? family : undefined;

export interface SttProvider {
  readonly id: string;
  /**
   * An engine of this process's own worker pools: slow to accept only when busy (its sessions wait
   * their turn there), never because it is down, so its opening is not held to the connect timeout.
   */
  readonly embedded?: boolean;
  /** The model's family; undefined for a model this build's adapter does not serve. */
  family(model: string): SttFamily | undefined;
  /** Streaming recognition, for providers that offer it. */
  open?(req: SttStreamRequest): Promise<SttStream>;
  /** The refusal a new session would meet at once, for a provider whose capacity is bounded here. */
  overloaded?(): ProviderOverloaded | undefined;
  /** Connects to the provider's realtime WebSocket (families with `passthrough: true`). */
  passthrough?(req: SttStreamRequest): Promise<RawUpstream>;
  /** Synchronous file transcription, for models that offer it. */
  transcribe?(req: TranscriptionRequest): Promise<Transcription>;
}
