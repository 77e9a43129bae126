import type { Binding } from "../catalogue/types.ts";
import type { FileSessionContext as AppContext } from "./file-context.ts";
import { ApiError } from "../errors.ts";
import type { MeteredRequest } from "../ledger/meter.ts";
import type { SttFamily, Transcription, TranscriptSegment } from "../providers/types.ts";
import type { SttPort, SttSessionEvent, SttSessionParams } from "./stt-events.ts";
import { SttSession } from "./stt-session.ts";

// A file through a streaming STT session (the one `/v1/stt` runs: its providers' streaming
// adapters, router turns, fallback while no provider took the session, and its billing of the
// audio given), for a caller that takes each final segment as it is recognized. The file's PCM
// goes in as fast as the session takes it (`Pace`), or in real time to a family that asks for
// that (`realtimeInput`). See docs/compat-oai.md (`stream: true`).

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

/**
 * How far the audio may run ahead of what the router VAD has heard, where it decides the turns:
 * audio handed to the audio workers is decoded even after the session ended, so a client that
 * leaves frees the recognizer within this much.
 */
const AHEAD_MS = 5000;

/** How a family takes a file's audio: all at once, as fast as the router VAD hears it, or in real time. */
type Pace = "all" | "heard" | "realtime";

const paceOf = (family: SttFamily | undefined): Pace => (family?.realtimeInput ? "realtime" : family?.turnDetector === "none" ? "heard" : "all");

interface Feeder {
  /** The router VAD has heard the audio up to `atMs`. */
  heard(atMs: number): void;
  stop(): void;
}

/** Gives the session its pieces at the family's pace, then closes it. */
function feed(session: SttSession, pieces: Uint8Array[], pace: Pace): Feeder {
  const t0 = performance.now();
  let next = 0;
  let heardMs = 0;
  let timer: Timer | undefined;
  const allowedMs = () => (pace === "realtime" ? performance.now() - t0 : pace === "heard" ? heardMs + AHEAD_MS : Number.POSITIVE_INFINITY);
  const send = () => {
    while (next < pieces.length && next * PIECE_MS <= allowedMs()) session.audio(pieces[next++]!);
    if (next === pieces.length) return session.command({ type: "close" });
    if (pace === "realtime") timer = setTimeout(send, Math.max(0, t0 + next * PIECE_MS - performance.now()));
  };
  send();
  return {
    heard: (atMs) => {
      if (pace !== "heard" || next === pieces.length) return;
      heardMs = Math.max(heardMs, atMs);
      send();
    },
    stop: () => clearTimeout(timer),
  };
}

/**
 * Runs the session; resolves once it completed and settled, with the final segments (trimmed,
 * empty ones dropped, joined by a space: what the segments sent as deltas join to). Rejects with
 * the session's error, or the signal's reason when the client left, once the usage is settled.
 */
export function streamFile(ctx: AppContext, f: FileStream): Promise<StreamedFile> {
  return new Promise((resolve, reject) => {
    const segments: TranscriptSegment[] = [];
    let serving: { provider: string; model: string } | undefined;
    let billed: number | undefined;
    let failure: ApiError | undefined;
    let feeder: Feeder | undefined;
    const event = (ev: SttSessionEvent) => {
      switch (ev.type) {
        case "started":
          serving = { provider: ev.provider, model: ev.model };
          feeder = feed(session, f.pieces, paceOf(f.plan.families.get(ev.provider)));
          return;
        case "vad":
          return feeder?.heard(ev.atMs);
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
        feeder?.stop();
        if (serving && billed !== undefined) resolve({ text: segments.map((s) => s.text).join(" "), segments, ...serving, billedSeconds: billed });
        else reject(failure ?? new ApiError("upstream_error", "the transcription ended before it was complete"));
      },
    };
    const session = new SttSession(
      // The router VAD's scores tell how far it has heard (`heard` pace).
      { ...f.plan, id: f.id, admit: async () => ({ candidates: f.admitted, meter: f.meter }), vadScores: true },
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
        feeder?.stop();
        void session.abort().then(() => reject(f.signal!.reason));
      },
      { once: true },
    );
  });
}
