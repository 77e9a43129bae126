import type { Config } from "../config.ts";

/** What is needed of Bun's server: the socket peer of a request. */
type PeerSource = { requestIP(request: Request): { address: string } | null } | null | undefined;

/**
 * The address a request came from, as every per-address limit counts it. Behind
 * `config.trustProxyHops` proxies of yours, each appending the address it saw to X-Forwarded-For,
 * the client is the entry that many places from the right: entries further left were written by
 * the client and prove nothing. Without a trusted proxy, or without the header, it is the peer.
 */
export function clientAddress(config: Pick<Config, "trustProxyHops">, request: Request, server: PeerSource): string {
  const peer = server?.requestIP(request)?.address ?? "unknown";
  const trustedHops = config.trustProxyHops;
  if (trustedHops === 0) return peer;
  const chain = (request.headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (chain.length === 0) return peer;
  // A shorter chain than the proxies configured: its leftmost entry is still one a proxy wrote.
  return chain[Math.max(0, chain.length - trustedHops)];
}
