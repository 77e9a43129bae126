import type { Principal } from "../accounts/keys.ts";
import type { Binding } from "../catalogue/types.ts";
import type { FileSessionContext as AppContext } from "./file-context.ts";
import { decoderFor } from "../audio/decodable.ts";
import { billedSeconds } from "../ledger/usage.ts";
import { ApiError } from "../errors.ts";
import type { Transcription, TranscriptSegment } from "../providers/stt-types.ts";
import { FileApiSession } from "./file-api-session.ts";
import type { PcmPieces } from "../providers/paced-audio.ts";
import { fitted, PIECE_MS, type StreamingPlan, streamFile } from "./file-stream.ts";
import type { SttSession } from "./stt-session.ts";
import { inSpan } from "../tracing/spans.ts";
import { recordId } from "../util/record-id.ts";

// One audio file in, its transcript out, for every surface that offers it (native, /oai, /el):
// routed, priced and held before any upstream work, tried on the candidates in order, and
// settled once. A caller that takes segments as they are recognized (`live`) has the file
// decoded and sent through a streaming session (file-stream.ts) when its model streams and the
// file decodes; otherwise it goes to the providers' file APIs. See docs/stt-files.md.

/** A planned file transcription (`planning/plan-stt-file.ts`), which the session runs. */
export interface FilePlan {
  /** The candidates whose adapter transcribes files, in order; throws why there are none, asked only when the file goes there. */
  fileCandidates(): Binding[];
  /** For a live caller: the streaming session its model may run, when a provider streams it. */
  streaming?: StreamingPlan;
}

export interface FileTranscriptionRequest {
  /** Taken over: it crosses to a worker to be measured (transferred, so the caller's view is emptied). */
  bytes: Uint8Array;
  mimeType?: string;
  language?: string;
  plan: FilePlan;
  surface: string;
  /**
   * Each final segment as it is recognized, through the plan's streaming session (when the model
   * has a streaming provider). Once one came, no fallback (it would repeat it).
   */
  live?: { onSegment: (segment: TranscriptSegment) => void };
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
  // A shutdown or a withdrawn key that comes while the file is measured or held for ends the streaming session once the hold is taken.
  let stopping: ((session: SttSession) => void) | undefined;
  const work = transcribe(ctx, principal, req, (session) => {
    streaming = session; // undefined again once the file goes on to the file APIs
    if (session) stopping?.(session);
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

async function transcribe(ctx: AppContext, principal: Principal, req: FileTranscriptionRequest, opened: (session: SttSession | undefined) => void): Promise<FileTranscription> {
  const plan = req.live ? req.plan.streaming : undefined;
  // The file APIs' refusal is told before the file is measured, unless a streaming plan may take it.
  const routed = plan ? undefined : req.plan.fileCandidates();
  const { probe, bytes } = await inSpan(
    "file.measure",
    () => ctx.files.probe(req.bytes),
    ({ probe }) => ({ "voxroute.container": probe.container, "voxroute.seconds": probe.seconds }),
  );
  const seconds = billedSeconds(probe.seconds);
  // The one choice of path: a live caller's file that the decoders read goes through the streaming session.
  const streamable = plan && decoderFor(probe.container) ? await ctx.meter.admit(principal, plan.candidates) : undefined;
  const first = streamable ?? (await ctx.meter.admit(principal, routed ?? req.plan.fileCandidates()));
  req.signal?.throwIfAborted();

  const id = recordId("stt_file");
  const meter = ctx.meter.start(id, principal, req.surface);
  const about = { id, durationSeconds: probe.seconds, language: req.language };
  let admitted = first;
  if (streamable) {
    // The streaming session holds for the whole file (its credit gate's first item) before it is decoded or given to a provider.
    const decode = async () => {
      const audio = await inSpan(
        "file.decode",
        () => decodedFor(ctx, plan!, bytes, probe.container, seconds),
        (audio) => ({ "voxroute.decodable": audio !== undefined }),
      );
      // A WAV that is not 16-bit PCM, or an MP3 with nothing that decodes: the file APIs may read it, on the same hold.
      if (!audio) admitted = await ctx.meter.admit(principal, req.plan.fileCandidates());
      return audio;
    };
    const streamed = await streamFile(ctx, { id, plan: plan!, admitted: first, meter, seconds, decode, surface: req.surface, onSegment: req.live!.onSegment, signal: req.signal, opened });
    if (streamed) return { ...streamed, ...about };
    opened(undefined);
  }
  const session = new FileApiSession(
    { id, admit: async () => ({ candidates: admitted, meter }), bytes, container: probe.container, mimeType: req.mimeType, language: req.language, seconds, signal: req.signal },
    {
      provider: (pid) => ctx.sttProviders.get(pid),
      port: { close: () => {} }, // an HTTP answer: the caller answers with the result or its error
      log: ctx.log,
      metrics: ctx.metrics,
      connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
      health: ctx.health,
      surface: req.surface,
      transport: "http",
    },
  );
  return { ...(await session.result), ...about, billedSeconds: seconds };
}
