import { fromPhoneAudio } from "./phone-caller.ts";

// A DTMF receiver as ITU-T Q.23/Q.24 describe the signal, for a caller that listens for tones in
// what a call played: the µ-law decoded by ffmpeg, cut into 40 ms blocks (Q.24's shortest tone),
// each measured with the Goertzel algorithm at the four row (697, 770, 852, 941 Hz) and four
// column (1209, 1336, 1477, 1633 Hz) frequencies. A block holds a digit when its strongest row and
// column stand well above the other rows and columns and carry most of the block's power; a digit
// is heard once per run of blocks holding it, runs parted by a block holding none.

const RATE = 16000;
const BLOCK = (RATE * 40) / 1000;
const ROWS = [697, 770, 852, 941];
const COLUMNS = [1209, 1336, 1477, 1633];
const KEYS = ["123A", "456B", "789C", "*0#D"];

/** The mean-square power of `block` at frequency `f` (a sinusoid of amplitude A gives about A²/2). */
function goertzel(block: Int16Array, f: number): number {
  const coeff = 2 * Math.cos((2 * Math.PI * f) / RATE);
  let [s1, s2] = [0, 0];
  for (const x of block) [s1, s2] = [x + coeff * s1 - s2, s1];
  return (2 * (s1 * s1 + s2 * s2 - coeff * s1 * s2)) / (block.length * block.length);
}

/** The strongest of `freqs` in `block`: its index when it is at least 10 times the next. */
function dominant(block: Int16Array, freqs: number[]): { index: number; power: number } | undefined {
  const powers = freqs.map((f) => goertzel(block, f));
  const sorted = [...powers].sort((a, b) => b - a);
  if (sorted[0]! < 10 * sorted[1]!) return undefined;
  return { index: powers.indexOf(sorted[0]!), power: sorted[0]! };
}

/** The key a 40 ms block holds, if any. */
function keyOf(block: Int16Array): string | undefined {
  const meanSquare = block.reduce((s, x) => s + x * x, 0) / block.length;
  if (meanSquare < 1e4) return undefined; // below about -50 dBFS: silence
  const row = dominant(block, ROWS);
  const column = dominant(block, COLUMNS);
  if (!row || !column || row.power + column.power < 0.7 * meanSquare) return undefined;
  return KEYS[row.index]![column.index];
}

/** The DTMF digits in µ-law at 8 kHz, in order, with the 40 ms blocks each run lasted and the silent blocks between. */
export function heardDigits(ulaw: Uint8Array): { digits: string; runs: { key: string | undefined; blocks: number }[] } {
  const pcm = fromPhoneAudio(ulaw);
  const runs: { key: string | undefined; blocks: number }[] = [];
  for (let at = 0; at + BLOCK <= pcm.length; at += BLOCK) {
    const key = keyOf(pcm.subarray(at, at + BLOCK));
    const last = runs.at(-1);
    if (last && last.key === key) last.blocks++;
    else runs.push({ key, blocks: 1 });
  }
  return { digits: runs.map((r) => r.key ?? "").join(""), runs };
}
