import { bearerKey } from "../auth-plugin.ts";
import type { Opening } from "../realtime-conversations.ts";
import { keyInProtocols, OAI_KEY_PROTOCOLS } from "../ws-subprotocols.ts";

// Where an OpenAI Realtime client puts its credential: the Authorization header (server-side
// SDKs), or a WebSocket subprotocol (browsers cannot set headers): `openai-insecure-api-key.<key>`
// as OpenAI's SDK spells it, `oai-insecure-api-key.<key>` as the interface does. Ephemeral keys
// (`ek_…`, from POST /oai/realtime/client_secrets) come the same ways.

export const EPHEMERAL_PREFIX = "ek_";
/** OpenAI's SDK always offers it: the upgrade answers with it. */
export const OAI_PROTOCOL = "realtime";

/** The credential of a realtime socket's request, as the opening of a conversation or transcription session. */
export function realtimeCredential(request: Request): Pick<Opening, "key" | "secret"> {
  const key = bearerKey(request) ?? keyInProtocols(request, OAI_KEY_PROTOCOLS);
  return key?.startsWith(EPHEMERAL_PREFIX) ? { secret: key } : { key };
}
