import { bearer } from "./ws-client.ts";
import type { TestServer } from "./server.ts";

// The recorded sentence the file-transcription tests send ("Thank you very much. For your help.",
// Ogg Opus, 6642 bytes), and the upload every cloud STT adapter's test makes with it.

export const speechOgg = () => Bun.file(new URL("../fixtures/speech.ogg", import.meta.url)).arrayBuffer();

/** POST /v1/stt/transcriptions of speech.ogg with `model` and language en-US, as `key`. */
export async function transcribeSpeechOgg(server: TestServer, key: string, model: string): Promise<Response> {
  const form = new FormData();
  form.set("model", model);
  form.set("language", "en-US");
  form.set("file", new Blob([await speechOgg()]), "speech.ogg");
  return fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: bearer(key), body: form });
}
