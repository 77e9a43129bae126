import { MPEGDecoder } from "mpg123-decoder";
import { ApiError } from "../errors.ts";

// Files to 16 kHz mono 16-bit PCM, for the embedded recognizer: WAV (16-bit PCM) and MP3
// (mpg123, compiled to WebAssembly). Other containers go to providers that take them as they are.

const TARGET = 16000;

function toInt16(channels: Float32Array[], rate: number): Int16Array {
  const frames = channels[0].length;
  const outLength = Math.floor((frames * TARGET) / rate);
  const out = new Int16Array(outLength);
  for (let i = 0; i < outLength; i++) {
    const pos = (i * rate) / TARGET;
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

function decodeWav(bytes: Uint8Array): Int16Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  let at = 12;
  let format: { channels: number; rate: number; bits: number; codec: number } | undefined;
  while (at + 8 <= bytes.length) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === "fmt ") {
      format = { codec: view.getUint16(at + 8, true), channels: view.getUint16(at + 10, true), rate: view.getUint32(at + 12, true), bits: view.getUint16(at + 22, true) };
    } else if (tag(at) === "data" && format) {
      if (format.codec !== 1 || format.bits !== 16) throw unsupported("WAV other than 16-bit PCM");
      const count = Math.floor(Math.min(size, bytes.length - at - 8) / 2 / format.channels);
      const channels = Array.from({ length: format.channels }, () => new Float32Array(count));
      for (let i = 0; i < count; i++) {
        for (let c = 0; c < format.channels; c++) channels[c][i] = view.getInt16(at + 8 + (i * format.channels + c) * 2, true) / 32768;
      }
      return toInt16(channels, format.rate);
    }
    at += 8 + size + (size & 1);
  }
  throw unsupported("a WAV file without 16-bit PCM data");
}

async function decodeMp3(bytes: Uint8Array): Promise<Int16Array> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const { channelData, sampleRate, errors } = decoder.decode(bytes);
    if (!channelData.length || !channelData[0].length) throw unsupported(`an MP3 that does not decode${errors.length ? ` (${errors[0].message})` : ""}`);
    return toInt16(channelData, sampleRate);
  } finally {
    decoder.free();
  }
}

const unsupported = (what: string) => new ApiError("validation", `the embedded recognizer cannot read ${what}; send WAV (16-bit PCM) or MP3`, { param: "file" });

export async function decodeToPcm16k(bytes: Uint8Array, container: string): Promise<Int16Array> {
  if (/^WAVE/i.test(container)) return decodeWav(bytes);
  if (/^MPEG$/i.test(container)) return decodeMp3(bytes);
  throw unsupported(`${container} files`);
}
