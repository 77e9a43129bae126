// A native WebSocket from the page. The key rides in a subprotocol (`voxroute-key.<key>`), never in
// the URL: browsers cannot set an Authorization header on a WebSocket.

export function openSocket(pathAndQuery: string, key?: string): WebSocket {
  const url = new URL(pathAndQuery, location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(url, key ? ["voxroute", `voxroute-key.${key}`] : []);
  ws.binaryType = "arraybuffer";
  return ws;
}

/** The reason of a close as a person reads it: the JSON `{error}` of 44xx closes, or the reason text. */
export function closeText(e: CloseEvent): string {
  try {
    const reason = JSON.parse(e.reason) as { error?: string };
    if (reason.error) return `closed ${e.code}: ${reason.error}`;
  } catch {}
  return `closed ${e.code}${e.reason ? `: ${e.reason}` : ""}`;
}
