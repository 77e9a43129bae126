// WebSocket subprotocols as browsers use them: a browser cannot set an Authorization header on a
// WebSocket, so a key may ride in a subprotocol it offers (`<prefix><key>`); and a browser that
// offered subprotocols fails the socket unless the upgrade names one of them. The upgrade never
// names one that carries a key: response headers end up in proxies' logs.

/** The native channels' key subprotocol (`voxroute-key.<key>`). */
export const NATIVE_KEY_PROTOCOL = "voxroute-key.";
/** `/oai/realtime`'s: OpenAI's SDK spelling, and the interface's. */
export const OAI_KEY_PROTOCOLS = ["openai-insecure-api-key.", "oai-insecure-api-key."];
const KEY_PROTOCOLS = [NATIVE_KEY_PROTOCOL, ...OAI_KEY_PROTOCOLS];
const carriesKey = (protocol: string) => KEY_PROTOCOLS.some((prefix) => protocol.startsWith(prefix));

/** The subprotocols the client offered, in its order. */
function offered(request: Request): string[] {
  return (request.headers.get("sec-websocket-protocol") ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
}

/** The key in the first offered subprotocol that starts with one of `prefixes`, if any. */
export function keyInProtocols(request: Request, prefixes: readonly string[]): string | undefined {
  for (const protocol of offered(request)) {
    const prefix = prefixes.find((p) => protocol.startsWith(p));
    if (prefix) return protocol.slice(prefix.length);
  }
  return undefined;
}

/**
 * The subprotocol the upgrade answers with: `preferred` when offered, else the first offered that
 * carries no key, else none. Named once the upgrade goes ahead, not on a refusal.
 */
export function chosenProtocol(request: Request, preferred: string): string | undefined {
  const protocols = offered(request);
  return protocols.includes(preferred) ? preferred : protocols.find((protocol) => !carriesKey(protocol));
}
