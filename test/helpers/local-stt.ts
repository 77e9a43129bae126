import { readFileSync } from "node:fs";
import { pcmOfWav } from "../../src/audio/wav.ts";
import { availability } from "../../src/providers/local-pocketsphinx/decoder.ts";
import { bearer, connect, type Recording } from "./ws-client.ts";

// Tests of the local recognizer need Debian's libpocketsphinx3 and pocketsphinx-en-us. In CI
// (REQUIRE_LOCAL_STT=1, set by .ci/run, which installs them) their absence is a failure;
// elsewhere those tests skip with a printed reason.

const status = availability(process.env.POCKETSPHINX_MODEL_DIR);
export const localSttAvailable = status.ok;
if (!status.ok) {
  if (process.env.REQUIRE_LOCAL_STT === "1") throw new Error(`the local recognizer is required (REQUIRE_LOCAL_STT=1): ${status.reason}`);
  console.warn(`skipping local STT tests: ${status.reason}`);
}

/**
 * The fixture recording (16 kHz), then 0.9 s of silence for the router VAD to end the turn on,
 * sent to PocketSphinx over `/v1/stt` in 20 ms frames; what the session sent until it closed.
 */
export async function transcribeRecording(base: string, key: string): Promise<Recording> {
  const pcm = Buffer.concat([pcmOfWav(readFileSync(new URL("../fixtures/speech.wav", import.meta.url))), new Uint8Array(28_800)]);
  const c = connect(`${base.replace(/^http/, "ws")}/v1/stt?model=pocketsphinx-en-us&audio_format=pcm_16000`, bearer(key));
  await c.opened;
  for (let at = 0; at < pcm.length; at += 640) c.ws.send(pcm.subarray(at, at + 640));
  c.send({ type: "stt.session.close" });
  return c.closed;
}
