/** The PCM payload of a RIFF/WAVE file (its `data` chunk), without copying: a view, whose `.buffer` is the whole file (see bytes.ts). */
export function pcmOfWav(wav: Uint8Array): Uint8Array {
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength);
  const tag = (at: number) => String.fromCharCode(wav[at], wav[at + 1], wav[at + 2], wav[at + 3]);
  if (wav.byteLength < 12 || tag(0) !== "RIFF" || tag(8) !== "WAVE") throw new Error("not a WAVE file");
  let at = 12;
  while (at + 8 <= wav.byteLength) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === "data") return wav.subarray(at + 8, Math.min(at + 8 + size, wav.byteLength));
    at += 8 + size + (size & 1);
  }
  throw new Error("WAVE file has no data chunk");
}

/**
 * A 44-byte header for 16-bit PCM. Without `dataBytes` the sizes are the maximum, as streamed WAV
 * does when the length is not known yet (players read to the end of the body).
 */
export function wavHeader(sampleRate: number, channels: number, dataBytes?: number): Uint8Array {
  const header = new Uint8Array(44);
  const view = new DataView(header.buffer);
  const ascii = (at: number, text: string) => header.set(new TextEncoder().encode(text), at);
  ascii(0, "RIFF");
  view.setUint32(4, dataBytes === undefined ? 0xffffffff : 36 + dataBytes, true);
  ascii(8, "WAVEfmt ");
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, channels, true);
  view.setUint32(24, sampleRate, true);
  view.setUint32(28, sampleRate * channels * 2, true);
  view.setUint16(32, channels * 2, true);
  view.setUint16(34, 16, true);
  ascii(36, "data");
  view.setUint32(40, dataBytes ?? 0xffffffff, true);
  return header;
}
