import type { ErrorCode } from "../errors.ts";
import type { VadOptions } from "../audio/vad.ts";
import type { SttAudioFormat } from "../catalogue/types.ts";
import type { PortableValues, SttEvent, SttFamily, SttProvider } from "../providers/stt-types.ts";
import type { Admission, SessionDeps } from "./admission.ts";
import type { VadLanes } from "./router-turns.ts";

// What an STT session is given, what it tells its surface, and what it takes from it. Surfaces map these to their
// own wire frames (`surfaces/native/stt-wire.ts`); the session builds no client frames.

export type SttCommand = { type: "commit" } | { type: "clear" } | { type: "close" };

/** The session's input as it runs, once a provider accepted it. */
export interface SttInputConfig {
  audioFormat: SttAudioFormat;
  sampleRate: number;
  channels: number;
  language: string | null;
  interimResults: boolean;
  commitStrategy: "auto" | "manual";
  turnDetection: "acoustic" | "semantic";
  /** Who decides where turns end: the provider's own detector or the router's VAD. */
  turnDetector: "provider" | "router_vad";
}

export type SttSessionEvent =
  | { type: "started"; sessionId: string; provider: string; model: string; input: SttInputConfig }
  /**
   * Another provider took over after `previous` failed (`reason`) in the middle of the session: it
   * was given the audio from `fromMs` (the caller's clock) again; its events follow on that clock.
   */
  | { type: "switched"; provider: string; model: string; input: SttInputConfig; previous: string; reason: string; fromMs: number }
  /**
   * The provider's stream events, each with the turn it belongs to: the same id across a turn's
   * signals, interim and final transcripts and its commit; the next turn starts after a commit or clear.
   */
  | (SttEvent & { turnId: string })
  /** Before an error close (also the cut-off at an exhausted balance). */
  | { type: "error"; code: ErrorCode; message: string }
  /** Before the normal close, once usage is settled. */
  | { type: "ended"; sessionId: string; provider?: string; model?: string; audioMs: number; billedSeconds: number };

export interface SttPort {
  event(event: SttSessionEvent): void;
  close(code: number, reason: string): void;
}

/** A session's audio, turn and option settings, as planned from its query. */
export interface SttSessionParams {
  families: Map<string, SttFamily>;
  audioFormat: SttAudioFormat;
  sampleRate: number;
  channels: number;
  bytesPerSecond: number;
  language?: string;
  /** Explicit `interim_results`, or undefined for the family's default. */
  interim?: boolean;
  commitStrategy: "auto" | "manual";
  turnDetection: "auto" | "acoustic" | "semantic";
  vad: VadOptions;
  /** The portable options given explicitly, with their values. */
  portable: PortableValues;
  options: Record<string, string>;
}

export interface SttSessionSetup extends SttSessionParams {
  id: string;
  admit: () => Promise<Admission>;
  /** See `IdleTimer`; 0 or absent for none. */
  idleTimeoutMs?: number;
  /**
   * The router VAD's speech probability is told as `vad` events, a few a second, where the router
   * VAD decides the turns (a conversation whose client shows it asks; `/v1/stt` does not).
   */
  vadScores?: boolean;
  /**
   * The audio is a recording (a file), given as fast as the session takes it: its arrivals time no
   * transcript (the event latency metric), and it is paid for whole before anything else happens.
   */
  recording?: SttRecording;
}

/** A recording, held for whole through the credit gate before it is readied or any provider is opened. */
export interface SttRecording {
  /** Its billed seconds: the gate's first item. */
  seconds: number;
  /** The whole recording is held for: from here the session is the request's (a shutdown or a withdrawn key ends it). */
  held(): void;
  /** Readies its audio (decodes it) once held; false: it cannot be streamed, and the session ends unrecorded, its hold handed on. */
  ready(): Promise<boolean>;
}

export interface SttSessionDeps extends SessionDeps<SttProvider, SttPort> {
  /** Where the router VAD runs, for families without a turn detector. */
  vadLanes: VadLanes;
}
