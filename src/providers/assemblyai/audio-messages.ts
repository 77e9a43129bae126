import { AddedSilence, silenceOf } from "../silence-keep-alive.ts";

// Universal-Streaming takes audio messages of 50 to 1000 ms only (anything else: Error 3007
// "Input Duration Violation" and the session is closed), whatever frames the client sends — and
// a client cannot size its frames for a fallback it did not choose (telephony sends 20 ms). So the
// client's audio is gathered until 50 ms are there, and sent at once then (at most 1000 ms a
// message). Before a ForceEndpoint or Terminate what is gathered goes too, a tail shorter than 50 ms
// padded with silence; AssemblyAI's clock counts that silence, `clock` takes it out again.

const MIN_MS = 50;
const MAX_MS = 1000;

export class AudioMessages {
  /** AssemblyAI's times on the client's audio clock. */
  readonly clock: AddedSilence;
  private readonly bytesPerMs: number;
  private readonly minBytes: number;
  private readonly maxBytes: number;
  private gathered: Uint8Array[] = [];
  private gatheredBytes = 0;
  private clientBytes = 0;

  /** `audioFormat`: the session's (`pcm_<rate>` or `ulaw_8000`); `send`: one message upstream. */
  constructor(
    private readonly audioFormat: string,
    private readonly send: (audio: Uint8Array) => void,
  ) {
    const sampleBytes = audioFormat.startsWith("ulaw") ? 1 : 2;
    const rate = Number(audioFormat.split("_")[1]);
    this.bytesPerMs = (rate * sampleBytes) / 1000;
    this.minBytes = Math.ceil((rate * MIN_MS) / 1000) * sampleBytes;
    this.maxBytes = ((rate * MAX_MS) / 1000) * sampleBytes;
    this.clock = new AddedSilence(() => this.clientMs);
  }

  /** The client's audio sent on so far, in ms (what was gathered counts once it has gone). */
  get clientMs(): number {
    return (this.clientBytes - this.gatheredBytes) / this.bytesPerMs;
  }

  push(audio: Uint8Array): void {
    if (!audio.byteLength) return;
    this.gathered.push(audio);
    this.gatheredBytes += audio.byteLength;
    this.clientBytes += audio.byteLength;
    while (this.gatheredBytes >= this.minBytes) this.sendGathered(Math.min(this.gatheredBytes, this.maxBytes));
  }

  /** Sends what is gathered, a tail under 50 ms padded with silence to 50 ms. */
  flush(): void {
    if (!this.gatheredBytes) return;
    const padBytes = Math.max(0, this.minBytes - this.gatheredBytes);
    if (padBytes) this.gathered.push(silenceOf(this.audioFormat, padBytes));
    this.gatheredBytes += padBytes;
    this.sendGathered(this.gatheredBytes);
    // The silence sits after all the client's audio, which has now gone.
    if (padBytes) this.clock.add(padBytes / this.bytesPerMs);
  }

  private sendGathered(bytes: number): void {
    const message = new Uint8Array(bytes);
    let at = 0;
    while (at < bytes) {
      const piece = this.gathered[0]!;
      const take = Math.min(piece.byteLength, bytes - at);
      message.set(take === piece.byteLength ? piece : piece.subarray(0, take), at);
      at += take;
      if (take === piece.byteLength) this.gathered.shift();
      else this.gathered[0] = piece.subarray(take);
    }
    this.gatheredBytes -= bytes;
    this.send(message);
  }
}
