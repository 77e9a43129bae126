import type { Binding } from "../catalogue/types.ts";
import { familyKey } from "../routing/candidate.ts";
import type { FileSessionContext as AppContext } from "./file-context.ts";
import { ApiError, sessionFailure } from "../errors.ts";
import type { MeteredRequest } from "../ledger/metered-request.ts";
import { feedPaced, type Pace, type PacedFeed, type PcmPieces } from "../providers/paced-audio.ts";
import type { SttFamily, Transcription, TranscriptSegment } from "../providers/stt-types.ts";
import type { SttPort, SttSessionEvent, SttSessionParams } from "./stt-events.ts";
import { SttSession } from "./stt-session.ts";
import { joinAudio } from "../util/turn-batch.ts";

// A file through a streaming STT session (the one `/v1/stt` runs: its providers' streaming
// adapters, router turns, fallback while no provider took the session, and its billing of the
// audio given), for a caller that takes each final segment as it is recognized. The file's PCM
// goes in as it is decoded, at the pace its provider's family takes it (`Pace`). One request,
// served over HTTP: the session is not counted apart from it (see transcribeFile), and its audio's
// arrivals time no transcript. See docs/compat-oai.md (`stream: true`).

/** The audio goes to the session in pieces this long; the session sends 200 ms a message (AssemblyAI takes 50–1000 ms). */
export const PIECE_MS = 100;

/** A streaming session's settings and its candidates, as planned for the model. */
export interface StreamingPlan extends SttSessionParams {
  candidates: Binding[];
}

export interface FileStream {
  id: string;
  plan: StreamingPlan;
  /** The plan's candidates this payer may use, and the request's meter. */
  admitted: Binding[];
  meter: MeteredRequest;
  /** The file's billed seconds: the session holds for them all before it decodes any of it. */
  seconds: number;
  /**
   * The file's audio at the plan's rate, from `fitted`, asked for once the whole file is held for
   * (closed when the session ends); undefined when the decoders cannot read it: the session then
   * ends unrecorded and the request, its hold kept, goes on to the file APIs.
   */
  decode(): Promise<PcmPieces | undefined>;
  surface: string;
  onSegment: (segment: TranscriptSegment) => void;
  /** Aborted when the client left: the session ends as a `/v1/stt` session whose client went away. */
  signal?: AbortSignal;
  /** The session, once the whole file is held for: the request's entry among the open sessions ends it on a shutdown or a withdrawn key. */
  opened(session: SttSession): void;
}

export interface StreamedFile extends Transcription {
  provider: string;
  model: string;
  billedSeconds: number;
}

/**
 * The decoded audio (pieces of `PIECE_MS`, at most the file's billed seconds: see FilePool.decode's
 * `maxSamples`) as the session is given it: longer than one second less than the billed seconds,
 * so that the session, which bills the audio it was given, bills what the file path bills (the
 * measured duration, each second begun counting). A decoder's length differs from the measured
 * one by a few samples (resampling, MP3 padding): a shortfall is filled with silence. A last piece
 * under half a piece joins the one before it. Each piece has a buffer of its own (a recognizer may
 * take it over).
 */
export function fitted(decoded: PcmPieces, rate: number, billedSeconds: number): PcmPieces {
  const least = billedSeconds > 0 ? ((billedSeconds - 1) * rate + 1) * 2 : 0;
  const pieceBytes = (rate * PIECE_MS * 2) / 1000;
  async function* filled(): AsyncGenerator<Uint8Array> {
    let bytes = 0;
    for await (const piece of decoded) {
      bytes += piece.byteLength;
      yield piece;
    }
    while (bytes < least) {
      const size = Math.min(pieceBytes, least - bytes);
      bytes += size;
      yield new Uint8Array(size);
    }
  }
  async function* joined(): AsyncGenerator<Uint8Array> {
    let before: Uint8Array | undefined;
    let last: Uint8Array | undefined;
    for await (const piece of filled()) {
      if (before) yield before;
      [before, last] = [last, piece];
    }
    if (before && last && last.byteLength < pieceBytes / 2) {
      [before, last] = [joinAudio([before, last], before.byteLength + last.byteLength), undefined];
    }
    for (const piece of [before, last]) if (piece) yield piece;
  }
  return { [Symbol.asyncIterator]: joined, close: () => decoded.close() };
}

/** A family that asks for real time gets it; one whose turns the router VAD decides, as fast as it hears; the rest, all of it. */
const paceOf = (family: SttFamily | undefined): Pace => (family?.realtimeInput ? "realtime" : family?.turnDetector === "none" ? "heard" : "all");

/**
 * Runs the session; resolves once it completed and settled, with the final segments (trimmed,
 * empty ones dropped, joined by a space: what the segments sent as deltas join to), or with
 * undefined once it handed the request on unread. Rejects with the session's error, or the
 * signal's reason when the client left, once the usage is settled.
 */
export function streamFile(ctx: AppContext, f: FileStream): Promise<StreamedFile | undefined> {
  return new Promise((resolve, reject) => {
    const segments: TranscriptSegment[] = [];
    let serving: { provider: string; model: string } | undefined;
    let billed: number | undefined;
    let failure: ApiError | undefined;
    let audio: PcmPieces | undefined;
    let unreadable = false;
    let over = false;
    let feeder: PacedFeed | undefined;
    // The decoding is let go on every way out, whether the feeding began or not (also one that ends after).
    const stopFeeding = () => {
      over = true;
      if (feeder) feeder.stop();
      else audio?.close();
    };
    const ready = async () => {
      audio = await f.decode();
      if (over) audio?.close();
      unreadable = !audio;
      return !unreadable;
    };
    const event = (ev: SttSessionEvent) => {
      switch (ev.type) {
        case "started":
          serving = { provider: ev.provider, model: ev.model };
          feeder = feedPaced(audio!, f.plan.bytesPerSecond, paceOf(f.plan.families.get(familyKey(ev.provider, ev.model))), {
            send: (piece) => session.audio(piece),
            unsent: () => session.bufferedAmount,
            end: () => session.command({ type: "close" }),
            failed: (err) => session.end(sessionFailure(err)),
          });
          return;
        case "switched":
          return feeder?.repace(paceOf(f.plan.families.get(familyKey(ev.provider, ev.model))));
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
        stopFeeding();
        if (serving && billed !== undefined) resolve({ text: segments.map((s) => s.text).join(" "), segments, ...serving, billedSeconds: billed });
        else reject(failure ?? new ApiError("upstream_error", "the transcription ended before it was complete"));
      },
    };
    const session = new SttSession(
      // The router VAD's scores tell how far it has heard (`heard` pace); the audio is a recording.
      {
        ...f.plan,
        id: f.id,
        admit: async () => ({ candidates: f.admitted, meter: f.meter }),
        vadScores: true,
        recording: { seconds: f.seconds, held: () => f.opened(session), ready },
      },
      {
        provider: (id) => ctx.sttProviders.get(id),
        port,
        log: ctx.log,
        metrics: ctx.metrics,
        connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
        health: ctx.health,
        surface: f.surface,
        transport: "http",
        vadLanes: ctx.vadLanes,
      },
    );
    void session.finished.then(() => {
      if (!unreadable || over) return;
      f.signal?.removeEventListener("abort", left);
      resolve(undefined);
    });
    const left = () => {
      stopFeeding();
      void session.abort().then(() => reject(f.signal!.reason));
    };
    f.signal?.addEventListener("abort", left, { once: true });
    // A client that left before the listener was added (while the file was measured) is not missed.
    if (f.signal?.aborted) {
      f.signal.removeEventListener("abort", left);
      left();
    }
  });
}
