import { isIPv4, isIPv6 } from "node:net";

// The address ranges an application socket may not reach unless the operator allows private
// upstreams: anything that is not a public unicast address of the internet. IPv6 forms that carry
// an IPv4 address (mapped, compatible, NAT64) are judged by the address they carry.

/** Every non-public range, IPv4 and IPv6, with the kind a refusal names. */
const RANGES: [cidr: string, kind: string][] = [
  ["0.0.0.0/8", "unspecified"],
  ["10.0.0.0/8", "private"],
  ["100.64.0.0/10", "CGNAT"],
  ["127.0.0.0/8", "loopback"],
  ["169.254.0.0/16", "link-local"],
  ["172.16.0.0/12", "private"],
  ["192.168.0.0/16", "private"],
  ["224.0.0.0/4", "multicast"],
  ["240.0.0.0/4", "reserved"], // and 255.255.255.255, the broadcast address
  ["::/128", "unspecified"],
  ["::1/128", "loopback"],
  ["fc00::/7", "private"],
  ["fe80::/10", "link-local"],
  ["fec0::/10", "site-local"],
  ["ff00::/8", "multicast"],
];

/** Prefixes whose last 32 bits are an IPv4 address that the connection would in effect reach. */
const V4_CARRIERS: [base: string, prefix: number][] = [
  ["::ffff:0:0", 96], // IPv4-mapped
  ["::", 96], // IPv4-compatible (deprecated; :: and ::1 are judged above)
  ["64:ff9b::", 96], // NAT64
];

function v4Value(address: string): bigint {
  return address.split(".").reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
}

function v6Value(address: string): bigint {
  let text = address.replace(/%.*$/, "").toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = v4Value(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const groups = (s: string | undefined) => (s ? s.split(":") : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return all.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

const within = (value: bigint, bits: number, base: bigint, prefix: number) => value >> BigInt(bits - prefix) === base >> BigInt(bits - prefix);

const TABLE = RANGES.map(([cidr, kind]) => {
  const [base, prefix] = cidr.split("/");
  const v4 = isIPv4(base);
  return { v4, base: v4 ? v4Value(base) : v6Value(base), prefix: Number(prefix), kind };
});
const V4_TABLE = TABLE.filter((r) => r.v4);
const V6_TABLE = TABLE.filter((r) => !r.v4);
const CARRIER_TABLE = V4_CARRIERS.map(([base, prefix]) => ({ base: v6Value(base), prefix }));

function v4Kind(value: bigint): string | undefined {
  return V4_TABLE.find((r) => within(value, 32, r.base, r.prefix))?.kind;
}

/**
 * The kind of non-public range an IP address is in ("loopback", "private", …), or undefined for
 * a public address. Not an IP address at all: "invalid".
 */
export function nonPublicKind(address: string): string | undefined {
  const bare = address.replace(/^\[(.*)\]$/, "$1");
  if (isIPv4(bare)) return v4Kind(v4Value(bare));
  if (!isIPv6(bare)) return "invalid";
  const value = v6Value(bare);
  const own = V6_TABLE.find((r) => within(value, 128, r.base, r.prefix))?.kind;
  if (own) return own;
  if (CARRIER_TABLE.some((r) => within(value, 128, r.base, r.prefix))) return v4Kind(value & 0xffffffffn);
  return undefined;
}
