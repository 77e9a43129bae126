import { expect, test } from "bun:test";
import { PcmResampler } from "../src/audio/resampler.ts";

const tone = (rate: number, hz: number, seconds: number) => {
  const s = new Int16Array(rate * seconds);
  for (let i = 0; i < s.length; i++) s[i] = Math.round(10000 * Math.sin((2 * Math.PI * hz * i) / rate));
  return new Uint8Array(s.buffer);
};
/** Upward crossings, with hysteresis so the filter's start-up ripple is not counted as a cycle. */
const crossings = (pcm: Uint8Array) => {
  const s = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.byteLength / 2);
  let n = 0;
  let low = false;
  for (const v of s) {
    if (v < -1000) low = true;
    else if (v > 1000 && low) {
      low = false;
      n++;
    }
  }
  return n;
};

test("24 kHz → 16 kHz in odd-sized chunks: the length scales by the ratio and a 440 Hz tone stays 440 Hz", async () => {
  const r = await PcmResampler.create(24000, 16000);
  const input = tone(24000, 440, 1);
  const out: Uint8Array[] = [];
  for (let at = 0; at < input.byteLength; at += 4801) out.push(r.process(input.subarray(at, at + 4801)));
  r.destroy();
  const all = new Uint8Array(out.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of out) all.set(c, (at += c.byteLength) - c.byteLength);
  expect(Math.abs(all.byteLength / 2 - 16000)).toBeLessThan(100); // the filter's latency holds back a few samples
  expect(Math.abs(crossings(all) - 440)).toBeLessThanOrEqual(3);
});

test("16 kHz → 44.1 kHz upsampling", async () => {
  const r = await PcmResampler.create(16000, 44100);
  const out = r.process(tone(16000, 300, 1));
  r.destroy();
  expect(Math.abs(out.byteLength / 2 - 44100)).toBeLessThan(200);
  expect(Math.abs(crossings(out) - 300)).toBeLessThanOrEqual(3);
});

test("PcmDelivery: G.711 µ-law at 8 kHz from 16 kHz PCM in odd-sized chunks, decoding back to the tone; matching PCM passes untouched", async () => {
  const { PcmDelivery } = await import("../src/audio/pcm-delivery.ts");
  const { mulaw } = await import("alawmulaw");
  expect(PcmDelivery.for({ rate: 16000 }, { encoding: "pcm_s16le", sampleRate: 16000 })).toBeUndefined();
  expect(PcmDelivery.for({ rate: 16000 }, { encoding: "mp3", sampleRate: 44100 })).toBeUndefined();
  const d = PcmDelivery.for({ rate: 8000, companding: "ulaw" }, { encoding: "pcm_s16le", sampleRate: 16000 })!;
  const input = tone(16000, 440, 1);
  const parts: Uint8Array[] = [];
  for (let at = 0; at < input.byteLength; at += 3001) parts.push(await d.process(input.subarray(at, at + 3001)));
  d.release();
  const bytes = parts.reduce((n, p) => n + p.byteLength, 0);
  expect(Math.abs(bytes - 8000)).toBeLessThan(100); // one byte per sample
  const all = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) all.set(p, (at += p.byteLength) - p.byteLength);
  const decoded = mulaw.decode(all);
  expect(Math.abs(crossings(new Uint8Array(decoded.buffer)) - 440)).toBeLessThanOrEqual(3);
});
