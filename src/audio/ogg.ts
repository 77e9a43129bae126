// Ogg pages (RFC 3533) for a single logical stream: enough to carry Opus (RFC 7845).

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

function crc(bytes: Uint8Array): number {
  let c = 0;
  for (const b of bytes) c = ((c << 8) ^ CRC_TABLE[((c >>> 24) ^ b) & 0xff]!) >>> 0;
  return c;
}

export const OGG_BOS = 0x02;
export const OGG_EOS = 0x04;

/** Writes one logical Ogg stream's pages: each call is a page holding whole packets. */
export class OggPager {
  private readonly serial = crypto.getRandomValues(new Uint32Array(1))[0]!;
  private sequence = 0;

  /** One page of `packets` (each under 255 × 255 bytes; at most 255 lacing values in all), ending at `granule`. */
  page(packets: Uint8Array[], granule: number, flags = 0): Uint8Array {
    const lacing: number[] = [];
    for (const p of packets) {
      for (let n = p.byteLength; n >= 255; n -= 255) lacing.push(255);
      lacing.push(p.byteLength % 255);
    }
    const body = packets.reduce((n, p) => n + p.byteLength, 0);
    const page = new Uint8Array(27 + lacing.length + body);
    const view = new DataView(page.buffer);
    page.set([0x4f, 0x67, 0x67, 0x53]); // "OggS"
    view.setUint8(5, flags);
    view.setBigInt64(6, BigInt(granule), true);
    view.setUint32(14, this.serial, true);
    view.setUint32(18, this.sequence++, true);
    view.setUint8(26, lacing.length);
    page.set(lacing, 27);
    let at = 27 + lacing.length;
    for (const p of packets) {
      page.set(p, at);
      at += p.byteLength;
    }
    view.setUint32(22, crc(page), true);
    return page;
  }
}
