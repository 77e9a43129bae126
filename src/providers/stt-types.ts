import type { SttAudioFormat } from "../catalogue/types.ts";
import type { ProviderOverloaded } from "../errors.ts";

// The interfaces every speech-to-text provider implements, local engine or cloud adapter alike.

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
