import { freePort } from "./free-port.ts";
import { SpeechEngineServer, type SpeechEngineSession, type TranscriptMessage } from "@elevenlabs/elevenlabs-js/wrapper/speech-engine/index.js";

// An ElevenLabs Speech Engine application as its builders write one: the SDK's own
// SpeechEngineServer, authentication on (it checks the token against `apiKey`), answering each
// transcript with the chunks `reply` yields, streamed through `session.sendResponse`.

export interface SeenByApp {
  init?: string;
  transcripts: TranscriptMessage[][];
  /** Each transcript's abort signal: fired when the next transcript came during its answer. */
  signals: AbortSignal[];
  errors: string[];
}

export async function startSpeechEngineApp(apiKey: string, reply: (transcript: TranscriptMessage[], signal: AbortSignal) => AsyncIterable<string>) {
  const port = await freePort();
  const seen: SeenByApp = { transcripts: [], signals: [], errors: [] };
  const app = new SpeechEngineServer({
    apiKey,
    port,
    onInit: (id: string) => void (seen.init = id),
    onTranscript: (transcript: TranscriptMessage[], signal: AbortSignal, session: SpeechEngineSession) => {
      seen.transcripts.push(transcript);
      seen.signals.push(signal);
      return session.sendResponse(reply(transcript, signal));
    },
    onError: (err: Error) => void seen.errors.push(err.message),
  });
  app.start();
  return { seen, url: `ws://127.0.0.1:${port}/`, stop: () => app.stop() };
}

/** The words of `text` one by one, `everyMs` apart, until the transcript's answer is aborted. */
export async function* wordByWord(text: string, signal: AbortSignal, everyMs = 0): AsyncIterable<string> {
  for (const word of text.split(/(?<= )/)) {
    if (signal.aborted) return;
    if (everyMs) await Bun.sleep(everyMs);
    if (!signal.aborted) yield word;
  }
}
