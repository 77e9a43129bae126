import type { Principal } from "../accounts/keys.ts";
import type { AppContext } from "../context.ts";
import { billedSeconds } from "../ledger/usage.ts";
import { ApiError, sessionFailure } from "../errors.ts";
import { ProviderError, type Transcription, type TranscriptSegment } from "../providers/types.ts";
import type { ProviderPreferences } from "../routing/preferences.ts";
import { resolve } from "../routing/resolve.ts";

// One audio file in, its transcript out, for every surface that offers it (native, /oai, /el):
// routed, priced and held before any upstream work, tried on the candidates in order, and
// settled once. See docs/stt-files.md.

export interface FileTranscriptionRequest {
  /** Taken over: it crosses to a worker to be measured (transferred, so the caller's view is emptied). */
  bytes: Uint8Array;
  mimeType?: string;
  model?: string;
  provider?: string;
  language?: string;
  preferences: ProviderPreferences;
  surface: string;
  /** Each final segment as the provider recognizes it, where it transcribes as a stream; once one came, no fallback (it would repeat it). */
  onSegment?: (segment: TranscriptSegment) => void;
}

export interface FileTranscription extends Transcription {
  id: string;
  durationSeconds: number;
  billedSeconds: number;
  provider: string;
  model: string;
  language?: string;
}

/**
 * Counted among the open sessions, so that a shutdown lets it finish and settle within the grace
 * period (past it the server stops waiting; a settle that then fails is logged for billing by hand).
 */
export function transcribeFile(ctx: AppContext, principal: Principal, req: FileTranscriptionRequest): Promise<FileTranscription> {
  const work = transcribe(ctx, principal, req);
  let giveUp = () => {};
  const stopped = new Promise<void>((resolve) => (giveUp = resolve));
  ctx.sessions.add(
    {
      finished: Promise.race([
        work.then(
          () => {},
          () => {},
        ),
        stopped,
      ]),
      shutdown: giveUp,
    },
    "stt_file",
  );
  return work;
}

async function transcribe(ctx: AppContext, principal: Principal, req: FileTranscriptionRequest): Promise<FileTranscription> {
  const routed = resolve(ctx.catalogue, { capability: "stt", model: req.model, provider: req.provider, mode: "synchronous", preferences: req.preferences });
  const candidates = routed.filter((b) => ctx.sttProviders.get(b.provider.id)?.transcribe);
  if (candidates.length === 0) throw new ApiError("no_matching_provider", `no provider in this build transcribes files with ${req.model}`);
  const { probe, bytes } = await ctx.files.probe(req.bytes);
  const seconds = billedSeconds(probe.seconds);
  const admitted = await ctx.meter.admit(principal, candidates);

  const id = `stt_file_${crypto.randomUUID()}`;
  const meter = ctx.meter.start(id, principal, req.surface);
  const startedAt = new Date();
  const t0 = performance.now();
  const attempts: { provider: string; reason: string }[] = [];
  let segmentsSent = false;
  const sink = req.onSegment;
  const onSegment = sink
    ? (s: TranscriptSegment) => {
        segmentsSent = true;
        sink(s);
      }
    : undefined;
  if (!(await meter.cover(admitted[0], seconds))) {
    await meter.settle({ binding: admitted[0], status: "failed", units: 0, startedAt, latencyMs: 0, attempts });
    throw new ApiError("insufficient_balance", `the balance cannot pay for ${seconds} s of audio`);
  }
  for (const binding of admitted) {
    // A fallback to a dearer provider is held for first: the balance pays for what it is asked.
    if (binding !== admitted[0] && !(await meter.cover(binding, seconds))) {
      await meter.settle({ binding, status: "failed", units: 0, startedAt, latencyMs: performance.now() - t0, attempts });
      throw new ApiError("insufficient_balance", `the balance cannot pay for ${seconds} s of audio on ${binding.provider.id}`);
    }
    let result: Transcription;
    try {
      result = await ctx.sttProviders.get(binding.provider.id)!.transcribe!({ model: binding.id, bytes, container: probe.container, mimeType: req.mimeType, language: req.language, onSegment });
    } catch (err) {
      attempts.push({ provider: binding.provider.id, reason: (err as Error).message });
      const retry = err instanceof ProviderError && err.retryable && binding !== admitted.at(-1) && !segmentsSent;
      if (retry) continue;
      await meter.settle({ binding, status: "failed", units: 0, startedAt, latencyMs: performance.now() - t0, attempts });
      if (err instanceof ProviderError && !err.retryable) throw new ApiError("validation", err.message);
      throw sessionFailure(err);
    }
    // Settled once, outside the provider's try: a ledger failure is not a provider failure.
    await meter.settle({ binding, status: "completed", units: seconds, startedAt, latencyMs: performance.now() - t0, attempts });
    return { ...result, id, durationSeconds: probe.seconds, billedSeconds: seconds, provider: binding.provider.id, model: binding.canonical, language: req.language };
  }
  throw new ApiError("upstream_error", "no provider could transcribe the file");
}
