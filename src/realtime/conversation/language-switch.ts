import type { Logger } from "../../log.ts";
import type { AppSocket } from "../app-socket.ts";
import type { ConversationEvent } from "./conversation-events.ts";
import type { Hearing } from "./hearing.ts";

/** What an application's `language` message changes: the caller's recognizer and the voice of later answers. */
export interface LanguageTargets {
  hearing: Hearing;
  /** Later answers are spoken in the language; resolves to the voice that speaks it, rejects when no voice of the profile does. */
  speakIn(language: string): Promise<string>;
  /** The client, told each half that took effect. */
  event(event: ConversationEvent): void;
  /** The application, told why a half could not be applied. */
  app(): AppSocket | undefined;
  log: Logger;
}

/** Each half of a `language` message is applied where the providers can; the application hears why where they cannot. */
export async function switchLanguages(to: LanguageTargets, tts: string | undefined, transcription: string | undefined): Promise<void> {
  if (transcription) {
    try {
      await to.hearing.switchTo({ language: transcription });
      to.log.info({ language: transcription }, "the caller is heard in another language");
      to.event({ type: "language_switched", stage: "stt", language: transcription });
    } catch (err) {
      to.app()?.refuse(`transcriptionLanguage ${transcription}: ${(err as Error).message}`);
    }
  }
  if (tts) {
    try {
      const voice = await to.speakIn(tts);
      to.log.info({ language: tts, voice }, "answers are spoken in another language");
      to.event({ type: "language_switched", stage: "tts", language: tts, voice });
    } catch (err) {
      to.app()?.refuse(`ttsLanguage ${tts}: ${(err as Error).message}`);
    }
  }
}
