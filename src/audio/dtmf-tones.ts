import { mulaw } from "alawmulaw";

// DTMF digits as in-band audio, G.711 µ-law at 8 kHz: each digit is its ITU-T Q.23 pair (one row
// frequency, one column frequency) for TONE_MS, then GAP_MS of silence; `w` is a WAIT_MS pause
// (as in Twilio's sendDigits). Q.24 asks receivers to take tones of 40 ms or more with pauses of
// 40 ms or more, so 100 + 100 ms is heard by any of them.

export const TONE_MS = 100;
export const GAP_MS = 100;
export const WAIT_MS = 500;
const RATE = 8000;
/** Each of the two frequencies at about -9 dBm0, the pair well inside µ-law's range. */
const AMPLITUDE = 0.3 * 32767;

const ROWS = [697, 770, 852, 941];
const COLUMNS = [1209, 1336, 1477, 1633];
const KEYPAD = ["123A", "456B", "789C", "*0#D"];

/** The row and column frequencies of a key of the 4 × 4 keypad (case-insensitive A–D). */
export function dtmfPair(key: string): [number, number] | undefined {
  const upper = key.toUpperCase();
  const row = KEYPAD.findIndex((keys) => keys.includes(upper));
  if (row < 0 || upper.length !== 1) return undefined;
  return [ROWS[row]!, COLUMNS[KEYPAD[row]!.indexOf(upper)]!];
}

const samples = (ms: number) => (RATE * ms) / 1000;

/** `digits` (0-9, *, #, A-D, w) as µ-law at 8 kHz; its length is a whole number of 20 ms frames. */
export function dtmfTones(digits: string): Uint8Array {
  const parts: Int16Array[] = [];
  for (const key of digits) {
    if (key === "w") {
      parts.push(new Int16Array(samples(WAIT_MS)));
      continue;
    }
    const pair = dtmfPair(key);
    if (!pair) throw new Error(`no DTMF tone for ${JSON.stringify(key)}`);
    const tone = new Int16Array(samples(TONE_MS));
    for (let i = 0; i < tone.length; i++) tone[i] = Math.round(AMPLITUDE * (Math.sin((2 * Math.PI * pair[0] * i) / RATE) + Math.sin((2 * Math.PI * pair[1] * i) / RATE)));
    parts.push(tone, new Int16Array(samples(GAP_MS)));
  }
  const pcm = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    pcm.set(part, at);
    at += part.length;
  }
  return mulaw.encode(pcm);
}
