/** The PCM payload of a RIFF/WAVE file (its `data` chunk), without copying. */
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
