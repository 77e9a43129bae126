// How each surface takes its credential (docs/account.md, compat-el.md, compat-oai.md,
// realtime.md), as security schemes and the requirements operations name.

export const SECURITY_SCHEMES = {
  bearer: { type: "http", scheme: "bearer", description: "`Authorization: Bearer <API key>`: a `vxr_…` key from `POST /account/agent-signup/verify` or the operator CLI" },
  xiApiKey: { type: "apiKey", in: "header", name: "xi-api-key", description: "ElevenLabs' key header, taken on `/el` (a voxroute key)" },
  elQueryKey: { type: "apiKey", in: "query", name: "authorization", description: "The `stream-input` socket's key in its query (`Bearer <key>` or the bare key), for clients that can set no header" },
  clientSecret: { type: "apiKey", in: "query", name: "client_secret", description: "A single-use secret from `POST /v1/realtime/client-secrets` that opens one `/v1/realtime` conversation" },
  keySubprotocol: {
    type: "apiKey",
    in: "header",
    name: "Sec-WebSocket-Protocol",
    description:
      "For browsers, which cannot set headers on a WebSocket: the subprotocols `voxroute` and `voxroute-key.<API key>` offered together; the upgrade answers `voxroute` (docs/tts-websocket.md)",
  },
  conversationSignature: {
    type: "apiKey",
    in: "query",
    name: "conversation_signature",
    description: "The single-use signature of a URL from `GET /el/v1/convai/conversation/get-signed-url`",
  },
} as const;

type Requirement = Partial<Record<keyof typeof SECURITY_SCHEMES, string[]>>[];

export const NO_KEY: Requirement = [];
export const BEARER: Requirement = [{ bearer: [] }];
/** The native sockets: the Bearer header, or the key as a subprotocol (browsers). */
export const SOCKET_KEY: Requirement = [{ bearer: [] }, { keySubprotocol: [] }];
/** A key is not needed; one that is sent must be valid. */
export const OPTIONAL_BEARER: Requirement = [{}, { bearer: [] }];
export const EL_KEY: Requirement = [{ xiApiKey: [] }, { bearer: [] }];
