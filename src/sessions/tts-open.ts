import { PronouncedStream, pronunciationFor } from "../pronunciation/pronounced-stream.ts";
import type { TtsProvider, TtsStream } from "../providers/types.ts";
import { type Candidate, voiceOf } from "../routing/candidate.ts";
import type { Admission } from "./admission.ts";
import { openWithin } from "./lifecycle/candidates.ts";
import type { CachedTtsStream } from "./tts-cache/cached-stream.ts";
import type { TtsSessionDeps, TtsSessionSetup } from "./tts-events.ts";

// How a TTS session opens a candidate: its provider asked for the session's sound in the candidate's
// voice, with the request's dictionaries, within the connect timeout; the provider's stream under the
// TTS cache, under the dictionaries.

export interface OpenedTts {
  /** What the session writes the text to and reads the audio from. */
  stream: TtsStream;
  /** The cache's stream under `stream` (absent when the cache does not serve the candidate). */
  cached: CachedTtsStream | undefined;
  /** The voice the candidate speaks in. */
  voice: string | undefined;
}

export async function openTts(
  provider: TtsProvider,
  binding: Candidate,
  setup: TtsSessionSetup,
  admission: Admission,
  deps: Pick<TtsSessionDeps, "connectTimeoutMs" | "ttsCache">,
): Promise<OpenedTts> {
  const { format, sampleRate, speed, options, alignment, interactive } = setup;
  const pronounced = pronunciationFor(admission.lexicon, binding.provider.id, provider.phonemes);
  const voice = voiceOf(binding, setup.voice);
  const opening = provider.open({
    model: binding.id,
    voice,
    format,
    ...(sampleRate ? { sampleRate } : {}),
    ...(speed !== undefined ? { speed } : {}),
    options,
    ...(alignment ? { alignment } : {}),
    ...(interactive ? { interactive } : {}),
    ...pronounced.request,
  });
  const opened = await openWithin(opening, deps.connectTimeoutMs, provider, (late) => late.cancel());
  // The cache sits under the dictionaries: it keys on the text as the provider is given it, and on the dictionaries' version.
  const cached = deps.ttsCache?.around(opened, setup, binding, voice, admission.lexicon?.version ?? "", admission.meter.payer.tenantId);
  const stream = pronounced.wrap(cached ?? opened);
  // Cached characters are billed as the caller wrote them, not as the rules expanded them.
  if (cached && stream instanceof PronouncedStream) cached.countAs((said) => stream.writtenAt(said));
  return { stream, cached, voice };
}
