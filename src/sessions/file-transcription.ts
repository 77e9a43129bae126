import type { Principal } from "../accounts/keys.ts";
import type { Binding } from "../catalogue/types.ts";
import type { FileSessionContext as AppContext } from "./file-context.ts";
import { decoderFor } from "../audio/decodable.ts";
import { billedSeconds } from "../ledger/usage.ts";
import type { MeteredRequest } from "../ledger/meter.ts";
import { ApiError, sessionFailure, ProviderError } from "../errors.ts";
import type { Transcription, TranscriptSegment } from "../providers/types.ts";
import type { ProviderPreferences } from "../routing/preferences.ts";
import { resolve } from "../routing/resolve.ts";
import type { PcmPieces } from "../providers/paced-audio.ts";
import { fitted, PIECE_MS, type StreamingPlan, streamFile } from "./file-stream.ts";
import type { SttSession } from "./stt-session.ts";

// One audio file in, its transcript out, for every surface that offers it (native, /oai, /el):
// routed, priced and held before any upstream work, tried on the candidates in order, and
// settled once. A caller that takes segments as they are recognized (`live`) has the file
// decoded and sent through a streaming session (file-stream.ts) when its model streams and the
// file decodes; otherwise it goes to the providers' file APIs. See docs/stt-files.md.

export interface FileTranscriptionRequest {
  /** Taken over: it crosses to a worker to be measured (transferred, so the caller's view is emptied). */
  bytes: Uint8Array;
  mimeType?: string;
  model?: string;
  provider?: string;
  language?: string;
  preferences: ProviderPreferences;
  surface: string;
  /**
   * Each final segment as it is recognized, through a streaming session planned for the model
   * (absent: the model has no streaming provider). Once one came, no fallback (it would repeat it).
   */
  live?: { plan?: StreamingPlan; onSegment: (segment: TranscriptSegment) => void };
  /** Aborted when the client left: the work stops, billed for the audio a provider was given (docs/compat-oai.md). */
  signal?: AbortSignal;
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
 * Counted among the open sessions, once whichever path it takes, so that a shutdown lets it finish
 * and settle within the grace period. Past it, a streaming session ends as any session does
 * (settled, billed for the audio its provider had), as it does when its key is withdrawn; on the
 * file path the server stops waiting (a settle that then fails is logged for billing by hand).
 */
export function transcribeFile(ctx: AppContext, principal: Principal, req: FileTranscriptionRequest): Promise<FileTranscription> {
  let streaming: SttSession | undefined;
  // A shutdown or a withdrawn key that comes while the file is held for or decoded ends the session once it opens.
  let stopping: ((session: SttSession) => void) | undefined;
  const work = transcribe(ctx, principal, req, (session) => {
    streaming = session;
    stopping?.(session);
  });
  let giveUp = () => {};
  const stopped = new Promise<void>((resolve) => (giveUp = resolve));
  const stop = (how: (session: SttSession) => void) => {
    if (streaming) return how(streaming);
    stopping ??= how;
  };
  ctx.sessions.add(
    {
      finished: Promise.race([
        work.then(
          () => {},
          () => {},
        ),
        stopped,
      ]),
      shutdown: () => {
        if (!streaming) giveUp();
        stop((session) => session.shutdown());
      },
      get payer() {
        return streaming?.payer;
      },
      end: (err) => stop((session) => session.end(err)),
    },
    "stt_file",
  );
  return work;
}

function fileCandidates(ctx: AppContext, req: FileTranscriptionRequest): Binding[] {
  const routed = resolve(ctx.catalogue, { capability: "stt", model: req.model, provider: req.provider, mode: "synchronous", preferences: req.preferences });
  const candidates = routed.filter((b) => ctx.sttProviders.get(b.provider.id)?.transcribe);
  if (candidates.length === 0) throw new ApiError("no_matching_provider", `no provider in this build transcribes files with ${req.model}`);
  return candidates;
}

/**
 * The file's audio for the streaming plan, decoded a batch at a time and no longer than the billed
 * seconds, or undefined when the decoders cannot read it (it goes to the file APIs, which read more
 * containers). Asked only once the whole file is held for.
 */
async function decodedFor(ctx: AppContext, plan: StreamingPlan, bytes: Uint8Array, container: string, seconds: number): Promise<PcmPieces | undefined> {
  const rate = plan.sampleRate;
  try {
    return fitted(await ctx.files.decode(bytes, container, rate, { maxSamples: seconds * rate, chunkSamples: (rate * PIECE_MS) / 1000 }), rate, seconds);
  } catch (err) {
    if (err instanceof ApiError && err.code === "validation") return undefined;
    throw err;
  }
}

async function transcribe(ctx: AppContext, principal: Principal, req: FileTranscriptionRequest, opened: (session: SttSession) => void): Promise<FileTranscription> {
  const plan = req.live?.plan;
  // Routed before the file is measured, unless a streaming plan may take it.
  const routed = plan ? undefined : fileCandidates(ctx, req);
  const { probe, bytes } = await ctx.files.probe(req.bytes);
  const seconds = billedSeconds(probe.seconds);
  // The one choice of path: a live caller's file that the decoders read goes through the streaming session.
  const streamable = plan && decoderFor(probe.container) ? await ctx.meter.admit(principal, plan.candidates) : undefined;
  const first = streamable ?? (await ctx.meter.admit(principal, routed ?? fileCandidates(ctx, req)));
  req.signal?.throwIfAborted();

  const id = `stt_file_${crypto.randomUUID()}`;
  const meter = ctx.meter.start(id, principal, req.surface);
  const startedAt = new Date();
  // The whole file is held for before any of it is decoded or given to a provider.
  if (!(await meter.cover(first[0], seconds))) {
    await meter.settle({ binding: first[0], status: "failed", units: 0, startedAt, latencyMs: 0, attempts: [] });
    throw new ApiError("insufficient_balance", `the balance cannot pay for ${seconds} s of audio`);
  }
  const about = { id, durationSeconds: probe.seconds, language: req.language };
  // A client that leaves from here on is seen by the path it takes, before a provider is given the file.
  let audio: PcmPieces | undefined;
  let admitted = first;
  try {
    audio = streamable && (await decodedFor(ctx, plan!, bytes, probe.container, seconds));
    // A WAV that is not 16-bit PCM, or an MP3 with nothing that decodes: the file APIs may read it.
    if (streamable && !audio) admitted = await ctx.meter.admit(principal, fileCandidates(ctx, req));
  } catch (err) {
    // Before any provider: recorded, unbilled, the hold released.
    await meter.unserved(first[0], startedAt);
    throw err;
  }
  if (audio) {
    const streamed = await streamFile(ctx, { id, plan: plan!, admitted, meter, audio, surface: req.surface, onSegment: req.live!.onSegment, signal: req.signal, opened });
    return { ...streamed, ...about };
  }
  const result = await fromFileApis(ctx, req, { bytes, container: probe.container, seconds, admitted, meter, startedAt });
  return { ...result, ...about, billedSeconds: seconds };
}

interface HeldFile {
  bytes: Uint8Array;
  container: string;
  seconds: number;
  admitted: Binding[];
  meter: MeteredRequest;
  startedAt: Date;
}

/**
 * The file to each candidate's file API in turn, settled once. A client that leaves while a
 * provider has the file is billed the whole file (it was given whole); before that, nothing.
 */
async function fromFileApis(ctx: AppContext, req: FileTranscriptionRequest, f: HeldFile): Promise<Transcription & { provider: string; model: string }> {
  const { admitted, meter, seconds, startedAt } = f;
  const t0 = performance.now();
  const attempts: { provider: string; reason: string }[] = [];
  const settle = (binding: Binding, status: "completed" | "failed", units: number) => meter.settle({ binding, status, units, startedAt, latencyMs: performance.now() - t0, attempts });
  for (const binding of admitted) {
    // Each candidate is held for first (a fallback to a dearer provider, or the file APIs' first
    // after a streaming plan's): the balance pays for what it is asked.
    if (!(await meter.cover(binding, seconds))) {
      await settle(binding, "failed", 0);
      throw new ApiError("insufficient_balance", `the balance cannot pay for ${seconds} s of audio on ${binding.provider.id}`);
    }
    if (req.signal?.aborted) {
      await settle(binding, "failed", 0);
      throw req.signal.reason;
    }
    let result: Transcription;
    // What the provider had of the file when the client left: the whole, unless it says it was given less.
    let given: number | undefined;
    try {
      result = await ctx.sttProviders.get(binding.provider.id)!.transcribe!({
        model: binding.id,
        bytes: f.bytes,
        container: f.container,
        mimeType: req.mimeType,
        language: req.language,
        seconds,
        signal: req.signal,
        given: (s) => (given = s),
      });
    } catch (err) {
      attempts.push({ provider: binding.provider.id, reason: (err as Error).message });
      if (req.signal?.aborted) {
        await settle(binding, "completed", given === undefined ? seconds : Math.min(seconds, billedSeconds(given)));
        throw req.signal.reason;
      }
      if (err instanceof ProviderError && err.retryable && binding !== admitted.at(-1)) continue;
      await settle(binding, "failed", 0);
      if (err instanceof ProviderError && !err.retryable) throw new ApiError("validation", err.message);
      throw sessionFailure(err);
    }
    // Settled once, outside the provider's try: a ledger failure is not a provider failure.
    await settle(binding, "completed", seconds);
    return { ...result, provider: binding.provider.id, model: binding.canonical };
  }
  throw new ApiError("upstream_error", "no provider could transcribe the file");
}
