import { BitReader } from "./bits.ts";
import { indeterminate } from "./indeterminate.ts";

// A Vorbis stream's packet lengths. A packet's mode (its first bits) chooses a short or long block;
// it adds a quarter of the previous block and a quarter of its own. The modes are at the end of the
// setup header, read backwards past its codebooks, as FFmpeg's Vorbis parser does.

export interface VorbisClock {
  rate: number;
  /** Samples a packet adds, in order of the stream. */
  samples(packet: Uint8Array): number;
}

export function vorbisClock(identification: Uint8Array, setup: Uint8Array): VorbisClock {
  if (identification[0] !== 1 || identification.length < 30 || setup[0] !== 5) throw indeterminate("the Vorbis headers cannot be read");
  const rate = new DataView(identification.buffer, identification.byteOffset + 12, 4).getUint32(0, true);
  const blocks = [1 << (identification[28] & 15), 1 << (identification[28] >> 4)];
  const longBlock = modeBlockFlags(setup);
  const modeBits = longBlock.length > 1 ? 32 - Math.clz32(longBlock.length - 1) : 0;
  let previous = blocks[0];
  return {
    rate,
    samples(packet) {
      if (!packet.length || packet[0] & 1) return 0; // a header packet, or nothing
      const mode = (packet[0] >> 1) & ((1 << modeBits) - 1);
      if (mode >= longBlock.length) return 0;
      const current = blocks[longBlock[mode] ? 1 : 0];
      const samples = (previous + current) >> 2;
      previous = current;
      return samples;
    },
  };
}

function modeBlockFlags(setup: Uint8Array): boolean[] {
  try {
    const reversed = () => new BitReader(Uint8Array.from(setup).reverse()); // a copy: a Buffer's slice is a view
    const r = reversed();
    let framing = 0;
    while (r.left > 97) {
      if (r.read(1)) {
        framing = setup.length * 8 - r.left; // just past the framing bit
        break;
      }
    }
    let count = 0;
    let modes = 0;
    // Each mode, backwards: mapping (8 bits, < 64), transform and window types (16 bits each, 0), block flag.
    while (r.left >= 97 && r.read(8) <= 63 && !r.read(16) && !r.read(16)) {
      r.skip(1);
      if (++count > 64) break;
      if (r.peek(6) + 1 === count) modes = count;
    }
    if (!modes || !framing) throw new RangeError("no modes");
    const flags = reversed();
    flags.skip(framing);
    const longBlock: boolean[] = [];
    for (let i = modes - 1; i >= 0; i--) {
      flags.skip(40);
      longBlock[i] = flags.read(1) === 1;
    }
    return longBlock;
  } catch {
    throw indeterminate("the Vorbis setup header cannot be read");
  }
}
