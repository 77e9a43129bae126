import type { Logger } from "../../log.ts";
import type { AppSignal, AppSocket } from "../app-socket.ts";
import type { OutputFormat } from "../output-formats.ts";
import type { ConversationPort } from "./conversation-events.ts";
import type { OpenStt } from "./hearing.ts";
import type { TtsPort } from "../../sessions/tts-events.ts";
import type { OpenTts } from "./spoken-response.ts";

// What a realtime conversation is made with: the surface's plan for it and its way to the client.

export interface ConversationSetup {
  id: string;
  profileId: string;
  input: { audioFormat: string; sampleRate: number };
  output: OutputFormat;
  /** Spoken as the first response once the application is connected. */
  greeting?: string;
  /** The surface carries a telephone call: the application's `sendDigits` become `send_digits` events (else it hears that there is no line). */
  phoneLine?: boolean;
  /** Interim transcripts go to the application as `prompt` with `last: false`. */
  partialPrompts: boolean;
  /** Opens the caller's STT session (it admits itself and takes audio at once). */
  openStt: OpenStt;
  /** The language the caller is heard in, when the profile names one. */
  language?: string;
  /** An answer's TTS session; `answer`: the language its tokens named, and how the application hears that no voice speaks it. */
  openTts(id: string, port: TtsPort, answer?: { language: string; refused(why: string): void }): ReturnType<OpenTts>;
  /** Later answers are spoken in `language` (a voice of the profile's TTS that speaks it); resolves to that voice. Rejects with `ApiError` when none does. */
  speakIn(language: string): Promise<string>;
  /** Connects to the application and says `setup`; rejects with `AppUnavailable`. */
  openApp(onSignal: (signal: AppSignal) => void): Promise<AppSocket>;
  /** An answer without `last: true` is finished after this long without a token. */
  answerQuietMs: number;
  /** See `IdleTimer`; 0 for none. */
  idleTimeoutMs: number;
}

export interface ConversationDeps {
  port: ConversationPort;
  log: Logger;
}
