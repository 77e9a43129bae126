import { bearerKey } from "../auth-plugin.ts";
import type { Opening } from "../realtime-conversations.ts";

// Where an OpenAI Realtime client puts its credential: the Authorization header (server-side
// SDKs), or a WebSocket subprotocol (browsers cannot set headers): `openai-insecure-api-key.<key>`
// as OpenAI's SDK spells it, `oai-insecure-api-key.<key>` as the interface does. Ephemeral keys
// (`ek_…`, from POST /oai/realtime/client_secrets) come the same ways.

const KEY_PROTOCOLS = ["openai-insecure-api-key.", "oai-insecure-api-key."];
export const EPHEMERAL_PREFIX = "ek_";

/** The subprotocols the client offered, in its order. */
function offered(request: Request): string[] {
  return (request.headers.get("sec-websocket-protocol") ?? "")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
}

/** The credential of a realtime socket's request, as the opening of a conversation or transcription session. */
export function realtimeCredential(request: Request): Pick<Opening, "key" | "secret"> {
  let key = bearerKey(request);
  for (const protocol of offered(request)) {
    const prefix = KEY_PROTOCOLS.find((p) => protocol.startsWith(p));
    if (!key && prefix) key = protocol.slice(prefix.length);
  }
  return key?.startsWith(EPHEMERAL_PREFIX) ? { secret: key } : { key };
}

/**
 * The subprotocol the upgrade answers with: a browser that offered some fails the socket unless
 * one is chosen. `realtime` when offered (OpenAI's SDK always offers it), else the first offered.
 */
export function chosenProtocol(request: Request): string | undefined {
  const protocols = offered(request);
  return protocols.includes("realtime") ? "realtime" : protocols[0];
}
