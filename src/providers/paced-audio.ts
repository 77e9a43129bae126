// A recording's audio (a file, decoded a piece at a time in a file worker) given to a recognizer
// at the pace it takes it, so that what is decoded ahead stays bounded whatever the file's length:
// the file path of the embedded recognizer, and a file sent through a streaming session
// (sessions/file-stream.ts).

/** Decoded audio, read piece by piece; `close` lets go of its decoding. */
export interface PcmPieces extends AsyncIterable<Uint8Array> {
  close(): void;
}

/**
 * How a recognizer takes a recording: as fast as its upstream reads it (a cloud socket: at most
 * `UNSENT_HIGH_WATER_BYTES` wait to go out), at most `AHEAD_MS` ahead of what it has heard (a
 * recognizer whose turns the router VAD decides, which tells how far it has heard), or in real
 * time (a provider that asks for it).
 */
export type Pace = "all" | "heard" | "realtime";

/**
 * For the `all` pace: the next piece goes only while less than this waits to go out to the
 * provider (`FeedTarget.unsent`: the session's queue and its socket's send buffer), so that an
 * upstream that reads slower than the file decodes holds the decoding back instead of the audio
 * piling up in memory. 512 KiB: 16 s of 16 kHz PCM, 8 s of 24 kHz PCM sent as base64.
 */
export const UNSENT_HIGH_WATER_BYTES = 512 * 1024;

/** How soon the `all` pace looks again past the high-water mark: a client WebSocket tells no drain. */
const DRAIN_POLL_MS = 10;

/**
 * How far the audio may run ahead of what the router VAD has heard: audio handed to the audio
 * workers is decoded even after the session ended, so a client that leaves frees the recognizer
 * within this much.
 */
export const AHEAD_MS = 5000;

export interface PacedFeed {
  /** The recognizer has heard the audio up to `atMs`. */
  heard(atMs: number): void;
  /** From now on at `pace` (another provider took the recording over); real time counts from here. */
  repace(pace: Pace): void;
  /** Nothing more is sent; the decoding is let go. */
  stop(): void;
}

export interface FeedTarget {
  send(piece: Uint8Array): void;
  /** For the `all` pace: bytes sent that have not yet gone out to the recognizer's upstream. */
  unsent?(): number;
  /** All of it was sent. */
  end(): void;
  /** The decoding failed (its worker died): nothing more comes. */
  failed(err: unknown): void;
}

/** Sends `audio` to `to` at `pace` (a piece goes once its start is due), then ends it. */
export function feedPaced(audio: PcmPieces, bytesPerSecond: number, pace: Pace, to: FeedTarget): PacedFeed {
  let t0 = performance.now();
  let sentBytes = 0;
  let heardMs = 0;
  let stopped = false;
  let wake: (() => void) | undefined;
  let timer: Timer | undefined;
  const allowedMs = () => (pace === "realtime" ? performance.now() - t0 : pace === "heard" ? heardMs + AHEAD_MS : Number.POSITIVE_INFINITY);
  const backedUp = () => pace === "all" && (to.unsent?.() ?? 0) >= UNSENT_HIGH_WATER_BYTES;
  const due = (atMs: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      clearTimeout(timer);
      if (pace === "realtime") timer = setTimeout(resolve, t0 + atMs - performance.now());
      else if (pace === "all") timer = setTimeout(resolve, DRAIN_POLL_MS);
    });
  const woken = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  void (async () => {
    try {
      for await (const piece of audio) {
        const atMs = (sentBytes / bytesPerSecond) * 1000;
        while (!stopped && (atMs > allowedMs() || backedUp())) await due(atMs);
        if (stopped) return;
        to.send(piece);
        sentBytes += piece.byteLength;
      }
      if (!stopped) to.end();
    } catch (err) {
      if (!stopped) to.failed(err);
    }
  })();
  return {
    heard: (atMs) => {
      heardMs = Math.max(heardMs, atMs);
      woken();
    },
    repace: (next) => {
      if (next === "realtime" && pace !== "realtime") t0 = performance.now() - (sentBytes / bytesPerSecond) * 1000;
      pace = next;
      woken();
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      audio.close();
      woken();
    },
  };
}
