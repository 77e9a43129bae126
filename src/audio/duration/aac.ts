import { BitReader } from "./bits.ts";
import { indeterminate } from "./indeterminate.ts";
import { AAC_RATES } from "./mpeg.ts";

/** AAC object types whose GASpecificConfig starts with the frame length flag (960 or 1024 samples). */
const GENERAL_AUDIO = new Set([1, 2, 3, 4, 6, 7, 17, 19, 20, 21, 22]);
const LOW_DELAY = new Set([23, 39]); // 480 or 512 samples

/**
 * How long each AAC frame plays, from the stream's AudioSpecificConfig (ISO 14496-3 §1.6.2.1): its
 * core sample rate and frame length. With SBR the output rate doubles and so do the samples, so a
 * frame lasts the same.
 */
export function aacFrameSeconds(config: Uint8Array): number {
  try {
    const r = new BitReader(config);
    const objectType = () => {
      const t = r.read(5);
      return t === 31 ? 32 + r.read(6) : t;
    };
    const rate = () => {
      const i = r.read(4);
      return i === 15 ? r.read(24) : AAC_RATES[i];
    };
    let type = objectType();
    const core = rate();
    r.skip(4); // channel configuration
    if (type === 5 || type === 29) {
      rate(); // the SBR output rate
      type = objectType();
      if (type === 22) r.skip(4);
    }
    if (!core) throw new RangeError("no sample rate");
    if (GENERAL_AUDIO.has(type)) return (r.read(1) ? 960 : 1024) / core;
    if (LOW_DELAY.has(type)) return (r.read(1) ? 480 : 512) / core;
  } catch {
    // the config is cut short or names no rate
  }
  throw indeterminate("the AAC configuration cannot be read or its object type cannot be measured");
}
