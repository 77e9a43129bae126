import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { nonPublicKind } from "./private-addresses.ts";

// The SSRF guard of the application socket (docs/realtime.md#private-upstreams). A profile's
// `pipeline.upstream.url` is a tenant's input that the router connects to from inside the
// operator's network, so unless REALTIME_ALLOW_PRIVATE_UPSTREAMS is set it may only reach public
// addresses: literal ones are refused when the profile is stored, names when the socket opens,
// after resolving them; the socket then connects to the address that was checked, so a second
// resolution (DNS rebinding) cannot send it elsewhere.

/** An application URL the guard refuses; the message names the rule, never a resolved address. */
export class UpstreamRefused extends Error {}

/** Resolves a host name to all its addresses (node's `dns.lookup`, or a test's stand-in). */
export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface ResolvedUpstream {
  /** The URL to open: the original with the checked address in place of the host name. */
  connectUrl: string;
  address: string;
  family: 4 | 6;
  /** The `Host` header to send: the original URL's host (and port). */
  host: string;
  /** For `wss:` to a name, the TLS server name (SNI and certificate check): the original host name. */
  servername?: string;
}

/** `localhost` and every name under it are loopback by definition (RFC 6761), whatever DNS says. */
const isLocalhostName = (hostname: string) => /(^|\.)localhost$/i.test(hostname.replace(/\.$/, ""));

/** The URL's host without IPv6 brackets. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

/**
 * Why this URL is refused without resolving anything, or undefined: not ws/wss, credentials in it,
 * or a host that is a non-public IP literal or a localhost name. `URL` has already turned the
 * other spellings of an IPv4 address (`0x7f.1`, `127.1`, `2130706433`) into dotted form.
 */
export function literalRefusal(url: URL, allowPrivate: boolean): string | undefined {
  if (url.protocol !== "ws:" && url.protocol !== "wss:") return "must be a ws:// or wss:// URL";
  if (allowPrivate) return undefined;
  if (url.username || url.password) return "must not carry credentials (send them as upstream headers)";
  const host = bareHost(url);
  if (isLocalhostName(host)) return "names a loopback host";
  if (isIP(host)) {
    const kind = nonPublicKind(host);
    if (kind) return `is a ${kind} address`;
  }
  return undefined;
}

/**
 * Checks the application URL at connect time and picks the address to connect to. Every address
 * the name resolves to must be public (one private answer refuses it all: the client could be
 * handed that one). Throws `UpstreamRefused`.
 */
export async function resolveUpstream(raw: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<ResolvedUpstream> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UpstreamRefused("the application URL is not a URL");
  }
  const refusal = literalRefusal(url, allowPrivate);
  if (refusal) throw new UpstreamRefused(`the application URL ${refusal}`);
  const host = bareHost(url);
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolve(host).catch(() => []);
  if (addresses.length === 0) throw new UpstreamRefused(`the application host ${host} does not resolve`);
  if (!allowPrivate) {
    for (const { address } of addresses) {
      const kind = nonPublicKind(address);
      if (kind) throw new UpstreamRefused(`the application host ${host} resolves to a ${kind} address`);
    }
  }
  const [{ address, family }] = addresses;
  const pinned = new URL(url);
  pinned.hostname = family === 6 ? `[${address}]` : address;
  return { connectUrl: pinned.toString(), address, family: family === 6 ? 6 : 4, host: url.host, ...(url.protocol === "wss:" && !isIP(host) ? { servername: host.replace(/\.$/, "") } : {}) };
}
