// `Buffer.prototype.slice` returns a view, unlike `Uint8Array.prototype.slice`, so the `.buffer` of
// a Buffer's slice is the whole allocation: a WAV file with its header, a socket's read buffer.
// Audio that crosses a worker boundary, or is read as samples, goes through these two functions.

/** Exactly the view's bytes in an ArrayBuffer of their own: the view's own buffer when it spans all of it, else a copy. */
export function exactBuffer(view: Uint8Array): ArrayBuffer {
  const { buffer } = view;
  if (buffer instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === buffer.byteLength) return buffer;
  return new Uint8Array(view).buffer;
}

/** The whole 16-bit little-endian samples in `bytes` (a trailing odd byte is left out), copied only when misaligned. */
export function samplesOf(bytes: Uint8Array): Int16Array {
  const count = bytes.byteLength >> 1;
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, count);
  return new Int16Array(exactBuffer(bytes.subarray(0, count * 2)));
}

/** The view's bytes (only they, not its whole buffer) as base64, for protocols that carry audio inside JSON. */
export function base64Of(view: Uint8Array): string {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength).toString("base64");
}
