import { AAC_RATES } from "./duration/mpeg.ts";

// ADTS (ISO/IEC 13818-7 / 14496-3): the 7-byte header that makes raw AAC frames a streamable
// `audio/aac` file, one before each frame.

/** AAC-LC is audio object type 2; ADTS stores it minus one. */
const AAC_LC_PROFILE = 1;
const MONO = 1;
const HEADER_BYTES = 7;

/** The header of one mono AAC-LC frame of `payloadBytes` at `sampleRate`: MPEG-4, no CRC, variable bit rate. */
export function adtsHeader(sampleRate: number, payloadBytes: number): Uint8Array {
  const frequency = AAC_RATES.indexOf(sampleRate);
  if (frequency < 0) throw new Error(`ADTS has no sampling frequency ${sampleRate}`);
  const length = HEADER_BYTES + payloadBytes;
  return new Uint8Array([
    0xff, // syncword …
    0xf1, // … syncword, MPEG-4, layer 0, no CRC
    (AAC_LC_PROFILE << 6) | (frequency << 2) | (MONO >> 2),
    ((MONO & 3) << 6) | (length >> 11),
    (length >> 3) & 0xff,
    ((length & 7) << 5) | 0x1f, // buffer fullness 0x7FF: variable bit rate …
    0xfc, // … and one raw data block
  ]);
}
