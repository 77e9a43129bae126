import { expect } from "bun:test";
import { wavHeader } from "../../src/audio/wav.ts";
import { digestOf, type AudioDigest } from "../fakes/received-audio.ts";
import { fundedAccount, lastActivity } from "./accounts.ts";
import { bearer } from "./ws-client.ts";
import type { TestServer } from "./server.ts";

// The recorded sentence the file-transcription tests send ("Thank you very much. For your help.",
// Ogg Opus, 6642 bytes), the upload every cloud STT adapter's test makes with it, and what a fake
// that received it intact reports. The router gives a file API the file as uploaded
// (docs/stt-files.md), so that is the fixture's own digest.

export const speechOgg = () => Bun.file(new URL("../fixtures/speech.ogg", import.meta.url)).arrayBuffer();

/** What a file API that received speech.ogg byte for byte reports. */
export const speechOggDigest = async (): Promise<AudioDigest> => digestOf([new Uint8Array(await speechOgg())]);

/** Two seconds of digital silence as a 16 kHz WAV: a fake hears no words in it. */
export const silentWav = new Uint8Array(Buffer.concat([wavHeader(16000, 1, 64000), new Uint8Array(64000)]));

/** POST /v1/stt/transcriptions of `file` with `model` and language en-US, as `key`. */
export async function transcribeFile(server: TestServer, key: string, model: string, file: Uint8Array | ArrayBuffer, name: string): Promise<Response> {
  const form = new FormData();
  form.set("model", model);
  form.set("language", "en-US");
  form.set("file", new Blob([file]), name);
  return fetch(`${server.url}/v1/stt/transcriptions`, { method: "POST", headers: bearer(key), body: form });
}

/** POST /v1/stt/transcriptions of speech.ogg with `model` and language en-US, as `key`. */
export async function transcribeSpeechOgg(server: TestServer, key: string, model: string): Promise<Response> {
  return transcribeFile(server, key, model, await speechOgg(), "speech.ogg");
}

/**
 * Transcribes `silentWav` with `model`: `provider` answers 200 with no words and two seconds
 * billed, and its fake (`received`: the file it had last) got the WAV byte for byte as uploaded.
 */
export async function expectSilenceUnheard(server: TestServer, model: string, provider: string, received: () => AudioDigest | undefined): Promise<void> {
  const res = await transcribeFile(server, server.key, model, silentWav, "quiet.wav");
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ provider, text: "", segments: [], billed_seconds: 2 });
  expect(received()).toEqual(digestOf([silentWav]));
}

/** A file API that fails (`fault` sets its fake to): speech.ogg with `model` is 502 `upstream_error`, recorded failed and unbilled. */
export async function expectUpstreamErrorUnbilled(server: TestServer, model: string, fault: () => void): Promise<void> {
  const { key, tenantId } = await fundedAccount(server);
  fault();
  const res = await transcribeSpeechOgg(server, key, model);
  expect(res.status).toBe(502);
  expect(await res.json()).toMatchObject({ error: "upstream_error" });
  expect(await lastActivity(server, tenantId)).toMatchObject({ status: "failed", credits: 0 });
}
