// A namespace import: Bun's bundler, given the named import, leaves out the package's other
// export that its index still refers to ("MPEGDecoderWebWorker is not defined" in `bun run build`).
import * as mpg123 from "mpg123-decoder";
import { ApiError } from "../errors.ts";
import { readWav } from "./wav.ts";

// Files to mono 16-bit PCM at the rate a recognizer takes (16 kHz for the embedded one, the
// streaming session's rate for a file sent through one): WAV (16-bit PCM) and MP3 (mpg123,
// compiled to WebAssembly). Other containers go to providers that take them as they are.

function toInt16(channels: Float32Array[], rate: number, target: number): Int16Array {
  const frames = channels[0].length;
  const outLength = Math.floor((frames * target) / rate);
  const out = new Int16Array(outLength);
  for (let i = 0; i < outLength; i++) {
    const pos = (i * rate) / target;
    const j = Math.floor(pos);
    const frac = pos - j;
    let sum = 0;
    for (const ch of channels) {
      const a = ch[j] ?? 0;
      const b = ch[j + 1] ?? a;
      sum += a + (b - a) * frac;
    }
    out[i] = Math.max(-32768, Math.min(32767, Math.round((sum / channels.length) * 32767)));
  }
  return out;
}

/** The audio probeDuration measured: every data chunk (see readWav), so what is heard is what is billed. */
function decodeWav(bytes: Uint8Array, target: number): Int16Array {
  const { format, data } = readWav(bytes);
  if (format.codec !== 1 || format.bits !== 16) throw unsupported("WAV other than 16-bit PCM");
  const frames = data.reduce((n, d) => n + Math.floor(d.byteLength / format.blockAlign), 0);
  const channels = Array.from({ length: format.channels }, () => new Float32Array(frames));
  let i = 0;
  for (const d of data) {
    const view = new DataView(d.buffer, d.byteOffset, d.byteLength);
    for (let at = 0; at + format.blockAlign <= d.byteLength; at += format.blockAlign, i++) {
      for (let c = 0; c < format.channels; c++) channels[c][i] = view.getInt16(at + c * 2, true) / 32768;
    }
  }
  return toInt16(channels, format.rate, target);
}

async function decodeMp3(bytes: Uint8Array, target: number): Promise<Int16Array> {
  const decoder = new mpg123.MPEGDecoder();
  await decoder.ready;
  try {
    const { channelData, sampleRate, errors } = decoder.decode(bytes);
    if (!channelData.length || !channelData[0].length) throw unsupported(`an MP3 that does not decode${errors.length ? ` (${errors[0].message})` : ""}`);
    return toInt16(channelData, sampleRate, target);
  } finally {
    decoder.free();
  }
}

const unsupported = (what: string) => new ApiError("validation", `the recognizer cannot read ${what}; send WAV (16-bit PCM) or MP3`, { param: "file" });

export async function decodeToPcm(bytes: Uint8Array, container: string, rate: number): Promise<Int16Array> {
  if (/^WAVE/i.test(container)) return decodeWav(bytes, rate);
  if (/^MPEG$/i.test(container)) return decodeMp3(bytes, rate);
  throw unsupported(`${container} files`);
}
