import type { ErrorCode } from "../errors.ts";
import type { AudioFormat, CharacterTimes, TtsProvider } from "../providers/types.ts";
import type { Admission, SessionDeps } from "./admission.ts";
import type { TtsCache } from "./tts-cache/tts-cache.ts";

// What a TTS session is given, what it tells its surface, and what it takes from it. Surfaces map these to their
// own wire frames (`surfaces/native/tts-wire.ts`, `surfaces/el/stream-input-port.ts`,
// `surfaces/http-tts-port.ts`); the session builds no client frames.

export type TtsCommand = { type: "text"; text: string } | { type: "flush" } | { type: "close" };

export type TtsSessionEvent =
  /** A provider accepted the session (sent once, also across fallbacks). */
  | { type: "ready"; sessionId: string }
  /**
   * An attempt at a provider, except the session's first on the model it asked for, which is told only if it fails (`ready` says it connected).
   * `voice`: with `connected`, the voice the provider speaks in (after a failover, the one now serving); a fallback model's candidate names it in every event.
   */
  | { type: "provider_status"; provider: string; model: string; status: "connecting" | "connected" | "failed"; voice?: string; reason?: string }
  /** Before the first audio: the audio's shape as the provider produces it. */
  | { type: "audio_started"; provider: string; model: string; format: AudioFormat }
  /** The provider answered a flush: the audio of the text before it has been sent. */
  | { type: "flushed" }
  /**
   * With `alignment` asked: when characters of the text are spoken, in seconds from the session's
   * first audio, sent before the audio they describe; `normalized` is the provider's normalized
   * text, or the text as written when the provider does not say.
   */
  | { type: "alignment"; alignment: CharacterTimes; normalized: CharacterTimes }
  /** Before an error close (also the cut-off at an exhausted balance). */
  | { type: "error"; code: ErrorCode; message: string; param?: string /** Seconds to wait before trying again (an HTTP answer's `Retry-After`). */; retryAfter?: number }
  /** Before the normal close, once usage is settled. */
  | { type: "ended"; sessionId: string; provider?: string; model?: string; characters: number; audioBytes: number };

/** The client, as the session sees it. */
export interface TtsPort {
  event(event: TtsSessionEvent): void;
  /** Resolves when the client can take more audio (backpressure). */
  sendAudio(chunk: Uint8Array): void | Promise<void>;
  close(code: number, reason: string): void;
  /** The events and audio `fn` sends go out to the client in one write, where the transport can (a socket's cork). */
  together?(fn: () => void): void;
}

export interface TtsSessionSetup {
  id: string;
  voice?: string;
  format: "pcm" | "mp3";
  /** The PCM rate the surface delivers, asked of providers that can produce it (see `TtsStreamRequest`). */
  sampleRate?: number;
  autoFlush: boolean;
  /** The planned speed (`TtsStreamRequest.speed`). */
  speed?: number;
  options: Record<string, string>;
  /** Ask providers for character timings (`alignment` events). */
  alignment?: boolean;
  /** `false`: the request opted out of the TTS cache (`cache: false`, `cache=false`). */
  cache?: boolean;
  /** A live conversation's answer (`TtsStreamRequest.interactive`). */
  interactive?: boolean;
  /** Auth, routing and billing admission; an `ApiError` from it ends the session with its close code. */
  admit: () => Promise<Admission>;
  /** See `IdleTimer`; 0 or absent when the surface keeps its own inactivity rule. */
  idleTimeoutMs?: number;
}

export type TtsSessionDeps = SessionDeps<TtsProvider, TtsPort> & {
  /** The router's TTS cache (absent: none). */
  ttsCache?: TtsCache;
};
