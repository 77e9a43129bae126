import type { ErrorCode } from "../../errors.ts";
import type { OutputFormat } from "../output-formats.ts";

// What a realtime conversation tells its surface. Surfaces map these to their own wire frames
// (`surfaces/native/realtime-wire.ts`); the conversation builds no client frames.

export interface ConversationUsage {
  sttSeconds: number;
  ttsCharacters: number;
}

export type ConversationEvent =
  /** The recognizer and the application are both connected (audio sent before this was kept). */
  | { type: "started"; sessionId: string; profileId: string; input: { audioFormat: string; sampleRate: number }; output: OutputFormat; stt: { provider: string; model: string } }
  /** The caller started or stopped speaking, as the router VAD or the provider heard it. */
  | { type: "speech"; turnId: string; state: "started" | "stopped"; atMs: number }
  /** The router VAD's speech probability (0–1) of the caller's audio up to `atMs`, a few a second, when the surface asked for it. */
  | { type: "vad"; score: number; atMs: number }
  /** `startMs`: where in the caller's audio the words began. */
  | { type: "transcript"; turnId: string; final: boolean; text: string; startMs: number }
  /** The caller's turn is over; its words went to the application as the prompt. `typed`: the client typed it (no audio was heard). */
  | { type: "turn_ended"; turnId: string; text: string; typed?: true }
  /** A token of the application's answer, as it came. */
  | { type: "response_text"; responseId: string; token: string; last: boolean }
  /** `voice`: when a fallback model (`fallbacks`) speaks the answer, the voice it speaks in. */
  | { type: "response_audio_started"; responseId: string; provider: string; model: string; voice?: string }
  | { type: "response_audio_done"; responseId: string; characters: number; audioMs: number }
  /** The caller talked over the response: it stopped, and audio the client still holds of it should be dropped. */
  | { type: "response_interrupted"; responseId: string; spokenText: string; audioMs: number }
  /**
   * A stage that had served failed mid-call, and the next candidate took over: the recognizer
   * (`stt`) once the conversation started, an answer's speech (`tts`) after its audio went out, in
   * `voice` when one is named. A switch before a stage served is told by `started` or `response_audio_started`.
   */
  | ({ type: "provider_switched"; provider: string; model: string; previous: string; reason: string } & ({ stage: "stt" } | { stage: "tts"; responseId: string; voice?: string }))
  /** The application's `language` took effect: the caller is heard in `language` (`stt`), or later answers are spoken in it, by `voice` (`tts`). */
  | ({ type: "language_switched"; language: string } & ({ stage: "stt" } | { stage: "tts"; voice: string }))
  /** The application asked for digits to be played on the telephone line (only where `ConversationSetup.phoneLine`). */
  | { type: "send_digits"; digits: string }
  | { type: "error"; code: ErrorCode; message: string }
  /** Before the close: what the conversation used, and the application's hand-off when it ended it. */
  | { type: "ended"; sessionId: string; reason: EndReason; handoffData?: string; usage: ConversationUsage };

export type EndReason = "client_closed" | "application_ended" | "application_closed" | "balance_exhausted" | "error";

/** The client, as the conversation sees it. */
export interface ConversationPort {
  event(event: ConversationEvent): void;
  /** Resolves when the client can take more audio (backpressure). */
  sendAudio(chunk: Uint8Array): void | Promise<void>;
  close(code: number, reason: string): void;
}
