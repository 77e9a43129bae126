import { AsyncQueue } from "../util/async-queue.ts";
import { ProviderError } from "../errors.ts";
import type { TtsEvent } from "./types.ts";

// How far synthesis may run ahead of a client. A session reads its provider's stream only as fast
// as the client takes the audio (the socket or response reports backpressure), so what the client
// has not read yet piles up in the provider stream's queue. Each provider stops producing while
// that backlog is over AUDIO_BACKLOG_BYTES: an embedded engine is given its next utterance, and an
// HTTP upstream's body read further, only below it; a WebSocket upstream, which cannot be told to
// stop sending, is given only a bounded window of text (paced-text.ts).

/** Unread audio past which a provider stops producing until the client has read below it. */
export const AUDIO_BACKLOG_BYTES = 512 * 1024;

/**
 * Unread audio past which a provider stream fails: an upstream that keeps sending audio for text
 * it was never given, or sends far more than the text explains, cannot grow memory without end.
 */
export const AUDIO_BACKLOG_CAP_BYTES = 16 * 1024 * 1024;

const audioBytes = (ev: TtsEvent) => (ev.type === "audio" ? ev.audio.byteLength : 0);

/** A provider stream's event queue, weighed in audio bytes and capped. */
export function ttsEventQueue(provider: string): AsyncQueue<TtsEvent> {
  return new AsyncQueue<TtsEvent>({
    size: audioBytes,
    cap: AUDIO_BACKLOG_CAP_BYTES,
    overflow: () => new ProviderError(`${provider} sent more than ${AUDIO_BACKLOG_CAP_BYTES / 2 ** 20} MiB of audio ahead of the client`, false),
  });
}
