/** Reads a byte string bit by bit, most significant bit first, as MPEG-4 and FLAC headers are written. */
export class BitReader {
  private at = 0;

  constructor(private readonly bytes: Uint8Array) {}

  read(bits: number): number {
    let value = 0;
    for (let i = 0; i < bits; i++, this.at++) {
      const byte = this.bytes[this.at >> 3];
      if (byte === undefined) throw new RangeError("read past the end");
      value = value * 2 + ((byte >> (7 - (this.at & 7))) & 1);
    }
    return value;
  }

  peek(bits: number): number {
    const value = this.read(bits);
    this.at -= bits;
    return value;
  }

  skip(bits: number): void {
    this.at += bits;
  }

  get left(): number {
    return this.bytes.length * 8 - this.at;
  }
}

export const fourcc = (bytes: Uint8Array, at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));

export const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
