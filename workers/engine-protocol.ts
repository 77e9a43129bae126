// Messages between the engine pool (main thread) and an engine worker. Audio crosses as a
// transferred ArrayBuffer holding exactly its bytes (`exactBuffer`).

export type EngineName = "flite" | "svox-pico" | "espeak-ng";
export type EngineFormat = "pcm" | "mp3";
/** Whose utterances go first: `interactive` (someone waits on the line for it) before `bulk` (docs/routing.md). */
export type EngineLane = "interactive" | "bulk";

export type ToWorker =
  /** `speed`: the pace asked (1 = natural), for engines that can change it; `lane` unset: bulk. */
  | { op: "open"; sid: number; engine: EngineName; voice?: string; format: EngineFormat; speed?: number; lane?: EngineLane }
  /** `raw`, for sessions that want character times: the text the utterance stands for, white space around `text` included. */
  | { op: "say"; sid: number; text: string; raw?: string }
  | { op: "end"; sid: number }
  | { op: "drop"; sid: number }
  | { op: "voices"; sid: number; engine: EngineName };

export type FromWorker =
  | { sid: number; ev: "opened"; sampleRate: number }
  | { sid: number; ev: "audio"; buf: ArrayBuffer }
  /** Before an utterance's audio, when asked: its characters' times in seconds from the session's first sample. */
  | { sid: number; ev: "alignment"; chars: string[]; starts: number[]; ends: number[] }
  | { sid: number; ev: "said" }
  | { sid: number; ev: "ended" }
  | { sid: number; ev: "voices"; voices: unknown[]; names: string[] }
  | { sid: number; ev: "error"; message: string; unknownVoice?: boolean };

export interface EngineWorkerOptions {
  /** The pool's temporary directory: each engine that writes files makes its own directory in it. */
  scratchDir: string;
  picoVoicesDir: string;
  picoVoicesUrl: string;
  /** The Pico voices offered (start-up found their files present or fetchable); unset: all. */
  picoVoices?: string[];
}
