import { Mp3StreamEncoder } from "../../src/audio/mp3.ts";
import { speak } from "../helpers/speech.ts";

// What the HTTP fakes share: real speech at the rate asked for, a streamed response that
// misbehaves on request, and the refusals every provider gives.

export type StreamFault = "stall" | "drop" | "malformed";

/** Flite speech (16 kHz) resampled to `rate`, as 16-bit little-endian PCM bytes. */
export function speech(text: string, rate: number): Uint8Array {
  const pcm16k = speak(text);
  const out = new Int16Array(Math.floor((pcm16k.length * rate) / 16000));
  for (let i = 0; i < out.length; i++) {
    const pos = (i * 16000) / rate;
    const j = Math.floor(pos);
    const a = pcm16k[j] ?? 0;
    const b = pcm16k[j + 1] ?? a;
    out[i] = Math.round(a + (b - a) * (pos - j));
  }
  return new Uint8Array(out.buffer);
}

export function mp3(pcm: Uint8Array, rate: number): Uint8Array {
  const enc = new Mp3StreamEncoder(rate);
  return Buffer.concat([enc.encode(pcm), enc.flush()]);
}

const dropsWaiting: (() => void)[] = [];

/**
 * A TTS `drop` fault (HTTP, or a TTS WebSocket cut at the TCP level) sends its first audio and then
 * cuts the connection only once this is called, when the test's client has heard that audio. A cut
 * made at once can overtake the audio before it (a reset response body discards the chunks its
 * reader has not taken yet), and the fault would then be one before any audio.
 */
export function cutDroppedConnections(): void {
  for (const cut of dropsWaiting.splice(0)) cut();
}

/** Resolves once the test calls `cutDroppedConnections`. */
export function dropCue(): Promise<void> {
  return new Promise((resolve) => dropsWaiting.push(resolve));
}

/** The audio as a chunked response; `stall` sends headers and then nothing, `drop` cuts it after two chunks (see `cutDroppedConnections`), `malformed` answers HTML. */
export function audioResponse(audio: Uint8Array, type: string, fault?: StreamFault): Response {
  if (fault === "malformed") return new Response("<html>gateway</html>", { headers: { "content-type": "text/html" } });
  const chunk = 4800;
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (fault === "stall") return new Promise(() => {});
      for (let i = 0; i < audio.length; i += chunk) {
        controller.enqueue(audio.subarray(i, i + chunk));
        if (fault === "drop" && i >= chunk) return dropCue().then(() => controller.error(new Error("connection reset")));
        await Bun.sleep(1);
      }
      controller.close();
    },
  });
  return new Response(stream, { headers: { "content-type": type } });
}

/**
 * A fault that strikes once a fake has sent `after` bytes of audio (counted across its responses
 * from when it was set), then clears: `die` cuts the connection in the middle of the response
 * that crosses the mark; `hang` stops that response there (headers sent, the connection kept
 * open, nothing more); `500` lets that response end and answers the next request with an error.
 */
export interface MidStreamFault {
  after: number;
  fault: "die" | "hang" | "500";
}

/** A fake's mid-stream fault as it counts the bytes it sends. */
export class MidStream {
  private armed: (MidStreamFault & { sent: number }) | undefined;

  set(fault: MidStreamFault | undefined): void {
    this.armed = fault && { ...fault, sent: 0 };
  }

  /** The mark was passed by earlier responses and the fault is an error answer: true once, for this request. */
  refuses(): boolean {
    if (this.armed?.fault !== "500" || this.armed.sent < this.armed.after) return false;
    this.armed = undefined;
    return true;
  }

  /** `audio` as a chunked response, cut or stalled where the armed fault says; `pause`: after each chunk, by its bytes (1 ms unless told). */
  response(audio: Uint8Array, type: string, pause: (bytes: number) => number = () => 1): Response {
    const chunk = 4800;
    const stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        for (let i = 0; i < audio.length; ) {
          const armed = this.armed;
          if (armed && armed.fault !== "500" && armed.sent >= armed.after) {
            this.armed = undefined;
            if (armed.fault === "hang") return new Promise(() => {});
            return controller.error(new Error("connection reset"));
          }
          // A cut or a hang strikes at the byte it is set for, inside a chunk if need be.
          const end = Math.min(i + chunk, armed && armed.fault !== "500" ? i + armed.after - armed.sent : audio.length);
          if (armed) armed.sent += end - i;
          controller.enqueue(audio.subarray(i, end));
          const sent = end - i;
          i = end;
          await Bun.sleep(pause(sent));
        }
        controller.close();
      },
    });
    return new Response(stream, { headers: { "content-type": type } });
  }
}

/**
 * The pause after sending `bytes` of audio: with `speed`, what streams the audio at that many times
 * real time (a provider that sends speech as it synthesizes it); without, 1 ms (as fast as it goes).
 */
export function pauseAfter(bytes: number, bytesPerSecond: number, speed: number | undefined): number {
  return speed ? (1000 * bytes) / bytesPerSecond / speed : 1;
}

/** `FAKE_SPEECH_SPEED` of a fake run as its own process: its speech streamed at that many times real time (see `pauseAfter`). */
export const speechSpeedFromEnv = (): number | undefined => Number(process.env.FAKE_SPEECH_SPEED) || undefined;

/** The statuses a fake answers for a wrong key or an injected fault. */
export type RefusalStatus = 401 | 429 | 500;

/**
 * A wrong key, or an injected "401" / "429" / "500" fault, answered in the provider's own error
 * shape; undefined when the request may go on.
 */
export function refusal(authorized: boolean, fault: string | undefined, answer: (status: RefusalStatus) => Response): Response | undefined {
  if (!authorized || fault === "401") return answer(401);
  if (fault === "429" || fault === "500") return answer(Number(fault) as RefusalStatus);
}
