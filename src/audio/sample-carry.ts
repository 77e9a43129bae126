/**
 * Cuts a stream of 16-bit PCM chunks into whole samples: a chunk may end in the middle of a
 * sample, whose first byte is carried over to the next chunk.
 */
export class SampleCarry {
  private carry: number | undefined;

  wholeSamples(chunk: Uint8Array): Uint8Array {
    let bytes = chunk;
    if (this.carry !== undefined) {
      bytes = new Uint8Array(chunk.byteLength + 1);
      bytes[0] = this.carry;
      bytes.set(chunk, 1);
      this.carry = undefined;
    }
    if (bytes.byteLength % 2) {
      this.carry = bytes[bytes.byteLength - 1];
      bytes = bytes.subarray(0, bytes.byteLength - 1);
    }
    return bytes;
  }
}
