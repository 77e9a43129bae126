// WebSocket subprotocols as browsers use them: a browser cannot set an Authorization header on a
// WebSocket, so a key may ride in a subprotocol it offers (`<prefix><key>`); and a browser that
// offered subprotocols fails the socket unless the upgrade names one of them.

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

/** The subprotocol the upgrade answers with: `preferred` when offered, else the first offered (none when none was). */
export function chosenProtocol(request: Request, preferred: string): string | undefined {
  const protocols = offered(request);
  return protocols.includes(preferred) ? preferred : protocols[0];
}

/** Names the chosen subprotocol on the upgrade's answer (Elysia's `set` of `beforeHandle`). */
export function answerProtocol(request: Request, set: { headers: Record<string, string | number> }, preferred: string): void {
  const protocol = chosenProtocol(request, preferred);
  if (protocol) set.headers["sec-websocket-protocol"] = protocol;
}
