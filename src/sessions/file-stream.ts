import type { Binding } from "../catalogue/types.ts";
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import type { MeteredRequest } from "../ledger/meter.ts";
import type { Transcription, TranscriptSegment } from "../providers/types.ts";
import type { SttPort, SttSessionEvent, SttSessionParams } from "./stt-events.ts";
import { SttSession } from "./stt-session.ts";

// A file through a streaming STT session (the one `/v1/stt` runs: its providers' streaming
// adapters, router turns, fallback while no provider took the session, and its billing of the
// audio given), for a caller that takes each final segment as it is recognized. The file's PCM
// goes in as fast as the session takes it, or in real time to a family that asks for that
// (`realtimeInput`). See docs/compat-oai.md (`stream: true`).

/** The audio goes to the session in pieces this long; the session sends 200 ms a message (AssemblyAI takes 50–1000 ms). */
export const PIECE_MS = 100;

/** A streaming session's settings and its candidates, as planned for the model. */
export interface StreamingPlan extends SttSessionParams {
  candidates: Binding[];
}

export interface FileStream {
  id: string;
  plan: StreamingPlan;
  /** The plan's candidates this payer may use, and the request's meter, its hold already covering the whole file. */
  admitted: Binding[];
  meter: MeteredRequest;
  /** The file's audio at the plan's rate, from `fitPieces`. */
  pieces: Uint8Array[];
  surface: string;
  onSegment: (segment: TranscriptSegment) => void;
  /** Aborted when the client left: the session ends as a `/v1/stt` session whose client went away. */
  signal?: AbortSignal;
}

export interface StreamedFile extends Transcription {
  provider: string;
  model: string;
  billedSeconds: number;
}

/**
 * The decoded audio (pieces of `PIECE_MS`) as the session is given it: no longer than the file's
 * billed seconds and longer than one second less, so that the session, which bills the audio it
 * was given, bills what the file path bills (the measured duration, each second begun counting).
 * A decoder's length differs from the measured one by a few samples (resampling, MP3 padding):
 * the excess is cut, a shortfall filled with silence. A last piece under half a piece joins the
 * one before it. Each piece has a buffer of its own (a recognizer may take it over).
 */
export function fitPieces(chunks: ArrayBuffer[], rate: number, billedSeconds: number): Uint8Array[] {
  const most = billedSeconds * rate * 2;
  const least = billedSeconds > 0 ? ((billedSeconds - 1) * rate + 1) * 2 : 0;
  const pieceBytes = (rate * PIECE_MS * 2) / 1000;
  const pieces: Uint8Array[] = [];
  let bytes = 0;
  for (const chunk of chunks) {
    if (bytes >= most) break;
    const take = Math.min(chunk.byteLength, most - bytes);
    pieces.push(new Uint8Array(take === chunk.byteLength ? chunk : chunk.slice(0, take)));
    bytes += take;
  }
  for (; bytes < least; bytes += pieces.at(-1)!.byteLength) pieces.push(new Uint8Array(Math.min(pieceBytes, least - bytes)));
  if (pieces.length > 1 && pieces.at(-1)!.byteLength < pieceBytes / 2) {
    const tail = pieces.pop()!;
    const before = pieces.pop()!;
    const joined = new Uint8Array(before.byteLength + tail.byteLength);
    joined.set(before);
    joined.set(tail, before.byteLength);
    pieces.push(joined);
  }
  return pieces;
}

/** Gives the session its pieces, then closes it: at once, or each piece when its time comes. */
function feed(session: SttSession, pieces: Uint8Array[], realtime: boolean): () => void {
  if (!realtime) {
    for (const piece of pieces) session.audio(piece);
    session.command({ type: "close" });
    return () => {};
  }
  const t0 = performance.now();
  let next = 0;
  let timer: Timer | undefined;
  const tick = () => {
    while (next < pieces.length && next * PIECE_MS <= performance.now() - t0) session.audio(pieces[next++]!);
    if (next === pieces.length) return session.command({ type: "close" });
    timer = setTimeout(tick, Math.max(0, t0 + next * PIECE_MS - performance.now()));
  };
  tick();
  return () => clearTimeout(timer);
}

/**
 * Runs the session; resolves once it completed and settled, with the final segments (trimmed,
 * empty ones dropped, joined by a space: what the segments sent as deltas join to). Rejects with
 * the session's error after it settled, or at once when the client left.
 */
export function streamFile(ctx: AppContext, f: FileStream): Promise<StreamedFile> {
  return new Promise((resolve, reject) => {
    const segments: TranscriptSegment[] = [];
    let serving: { provider: string; model: string } | undefined;
    let billed: number | undefined;
    let failure: ApiError | undefined;
    let stopFeeding = () => {};
    const event = (ev: SttSessionEvent) => {
      switch (ev.type) {
        case "started":
          serving = { provider: ev.provider, model: ev.model };
          stopFeeding = feed(session, f.pieces, f.plan.families.get(ev.provider)?.realtimeInput === true);
          return;
        case "transcript": {
          const text = ev.text.trim();
          if (!ev.final || !text) return;
          const segment = { text, start_ms: ev.startMs, end_ms: ev.endMs };
          segments.push(segment);
          return f.onSegment(segment);
        }
        case "error":
          failure = new ApiError(ev.code, ev.message);
          return;
        case "ended":
          billed = ev.billedSeconds;
          return;
      }
    };
    const port: SttPort = {
      event,
      close: () => {
        stopFeeding();
        if (serving && billed !== undefined) resolve({ text: segments.map((s) => s.text).join(" "), segments, ...serving, billedSeconds: billed });
        else reject(failure ?? new ApiError("upstream_error", "the transcription ended before it was complete"));
      },
    };
    const session = new SttSession(
      { ...f.plan, id: f.id, admit: async () => ({ candidates: f.admitted, meter: f.meter }) },
      {
        provider: (id) => ctx.sttProviders.get(id),
        port,
        log: ctx.log,
        metrics: ctx.metrics,
        connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
        surface: f.surface,
        vadLanes: ctx.vadLanes,
      },
    );
    ctx.sessions.add(session, "stt");
    f.signal?.addEventListener(
      "abort",
      () => {
        stopFeeding();
        void session.abort().then(() => reject(f.signal!.reason));
      },
      { once: true },
    );
  });
}
