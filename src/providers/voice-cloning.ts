// What a provider that clones voices through its own API implements (src/voices/custom-voices.ts drives it).

/** One speaker's recordings, as the client uploaded them. */
export interface CloneFile {
  name: string;
  type: string;
  data: Uint8Array;
}

export interface CloneRequest {
  name: string;
  description?: string;
  language?: string;
  model?: string;
  files: CloneFile[];
}

/** What the provider made: its own id for the voice, and whether it is usable yet. */
export interface ClonedVoice {
  providerVoiceId: string;
  status: "processing" | "active";
}

export interface VoiceCloning {
  /** Throws ApiError: `custom_voices_failed` (the provider refused the audio or request: its 4xx, with the provider's message), `upstream_error` (5xx, timeouts, network). */
  clone(req: CloneRequest): Promise<ClonedVoice>;
  /** The provider's view of a voice it made: "active", "processing", or failed with a reason; `undefined` when it no longer has it. */
  status(providerVoiceId: string): Promise<{ status: "active" | "processing" } | { status: "failed"; reason: string } | undefined>;
  /** Deletes it upstream; a voice the provider no longer has counts as deleted. Throws ApiError `upstream_error` when the provider fails. */
  remove(providerVoiceId: string): Promise<void>;
}
