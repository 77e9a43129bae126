import type { TtsFormat } from "../catalogue/types.ts";

// The interfaces every provider implements, local engine or cloud adapter alike. Providers know
// nothing of surfaces, credits or our HTTP statuses.

export interface AudioFormat {
  encoding: "pcm_s16le" | "mp3";
  sampleRate: number;
  channels: 1;
}

export type TtsEvent = { type: "audio"; audio: Uint8Array } | { type: "flushed" };

/** One streaming synthesis. Iterating yields audio as produced and ends after `end()` is honoured. */
export interface TtsStream extends AsyncIterable<TtsEvent> {
  readonly audioFormat: AudioFormat;
  /** More text; the provider may hold it until it has a sentence. */
  write(text: string): void;
  /** Synthesize everything written so far; a `flushed` event follows its audio. */
  flush(): void;
  /** No more text: synthesize the rest, then the iteration ends. */
  end(): void;
  /** Stop now; nothing more is yielded. */
  cancel(): void;
}

export interface TtsStreamRequest {
  /** The provider's own model id. */
  model: string;
  voice?: string;
  format: TtsFormat;
  /** Provider-native options (`provider_options[...]` and unreserved query keys). */
  options: Record<string, string>;
}

export interface Voice {
  id: string;
  name: string;
  languages: string[];
  gender?: string;
}

export interface TtsProvider {
  readonly id: string;
  /** Resolves once the provider accepted the session (handshake done); rejects with `ProviderError`. */
  open(req: TtsStreamRequest): Promise<TtsStream>;
  voices(): Promise<Voice[]>;
}

/**
 * A provider failure. `retryable` failures (refused, handshake error, upstream 5xx) let the
 * session move on to the next candidate while no audio has reached the client; the others
 * (a bad voice, a rejected option) are the caller's to fix.
 */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
