import { wavHeader } from "../../src/audio/wav.ts";
import { createFliteEngine } from "../../src/providers/local-flite/engine.ts";
import { tempDir } from "./temp-dirs.ts";

// Real speech for STT tests, made by our own Flite: 16 kHz 16-bit mono PCM.

const flite = await createFliteEngine(tempDir("voxroute-speech-"));
await flite.prepare("slt");

export function speak(text: string): Int16Array {
  const parts: Uint8Array[] = [];
  flite.synthesize(text, "slt", (p) => parts.push(p));
  const b = Buffer.concat(parts);
  return new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** 16 kHz PCM (what `speak` gives) as a WAV file, as a client would upload a recording. */
export function wavFile(pcm: Int16Array, rate = 16000): Uint8Array {
  return new Uint8Array(Buffer.concat([wavHeader(rate, 1, pcm.byteLength), new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength)]));
}

export const silence = (ms: number, rate = 16000) => new Int16Array((rate / 1000) * ms);

export function concat(pieces: Int16Array[]): Int16Array {
  const out = new Int16Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** [start, end] ms of each spoken piece, by energy (10 ms windows above -40 dBFS): the truth VAD is judged by. */
export function spokenSpans(pieces: Int16Array[], rate = 16000): [number, number][] {
  const spans: [number, number][] = [];
  let offset = 0;
  const win = rate / 100;
  for (const p of pieces) {
    let first = -1;
    let last = -1;
    for (let i = 0; i + win <= p.length; i += win) {
      let energy = 0;
      for (let j = 0; j < win; j++) energy += p[i + j] ** 2;
      if (Math.sqrt(energy / win) / 32768 > 0.01) {
        if (first < 0) first = i;
        last = i + win;
      }
    }
    if (first >= 0) spans.push([((offset + first) / rate) * 1000, ((offset + last) / rate) * 1000]);
    offset += p.length;
  }
  return spans;
}

/** 20 ms frames of the PCM as separate byte buffers (each owning its ArrayBuffer). */
export function frames(pcm: Int16Array, rate = 16000, frameMs = 20): Uint8Array[] {
  const n = (rate / 1000) * frameMs;
  const out: Uint8Array[] = [];
  for (let i = 0; i < pcm.length; i += n) out.push(new Uint8Array(pcm.slice(i, i + n).buffer));
  return out;
}

/** 16 kHz PCM as OpenAI's 24 kHz (linear interpolation is enough for a test's input). */
export function to24k(pcm: Int16Array): Buffer {
  const out = new Int16Array(Math.floor((pcm.length * 3) / 2));
  for (let i = 0; i < out.length; i++) {
    const at = (i * 2) / 3;
    const j = Math.floor(at);
    out[i] = Math.round(pcm[j]! + (at - j) * ((pcm[j + 1] ?? pcm[j]!) - pcm[j]!));
  }
  return Buffer.from(out.buffer);
}

/** Which windows of `windowMs` ending at `ends` (ms) lie wholly inside a spoken span (`speech`), and which touch none (`quiet`); by index. */
export function windowsBySpeech(spans: [number, number][], ends: number[], windowMs: number): { speech: number[]; quiet: number[] } {
  const speech: number[] = [];
  const quiet: number[] = [];
  ends.forEach((end, i) => {
    const start = end - windowMs;
    if (spans.some(([s, e]) => start >= s && end <= e)) speech.push(i);
    else if (!spans.some(([s, e]) => start < e && end > s)) quiet.push(i);
  });
  return { speech, quiet };
}
