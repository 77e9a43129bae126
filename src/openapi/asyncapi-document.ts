import type { ChannelPart, Message } from "./channel.ts";
import type { Operation, Parameter } from "./document-types.ts";
import type { openApiDocument } from "./document.ts";
import { realtimeChannel } from "./realtime-channel.ts";
import { SECURITY_SCHEMES } from "./security.ts";
import { sttChannel } from "./stt-channel.ts";
import { ttsChannel } from "./tts-channel.ts";

// The AsyncAPI 3.0 document of the WebSocket channels. Each channel is one of the OpenAPI
// document's WebSocket handshakes (`x-websocket`): its address, path parameters, query (the ws
// binding) and credentials come from there. The native channels' frames are described message by
// message; the compatibility channels speak ElevenLabs' and OpenAI's protocols, told in their docs.

const NATIVE: ChannelPart[] = [ttsChannel, sttChannel, realtimeChannel];

/** The interface's versions of the channel description and of its WebSocket binding. */
const CHANNELS_VERSION = "1.0.0";
const WS_BINDING_VERSION = "0.1.0";

/** AsyncAPI spells the OpenAPI schemes' types its own way. */
const SCHEMES = Object.fromEntries(Object.entries(SECURITY_SCHEMES).map(([name, scheme]) => [name, scheme.type === "apiKey" ? { ...scheme, type: "httpApiKey" } : scheme]));

const camel = (id: string) => id.replace(/[^a-zA-Z0-9]+(.)/g, (_, c: string) => c.toUpperCase());
const idOf = (address: string) => camel(address.replace(/\{[^}]+\}\/?/g, "").replace(/^\//, ""));

const messagesOf = (list: Message[], prefix: string) => Object.fromEntries(list.map((m) => [`${prefix}.${m.name}`, m]));

/** The ws binding of a handshake: its query as one object schema. */
function binding(parameters: Parameter[]) {
  const query = parameters.filter((p) => p.in === "query");
  return {
    ws: {
      method: "GET",
      query: {
        type: "object",
        properties: Object.fromEntries(query.map((p) => [p.name, { ...p.schema, description: p.description }])),
        ...(query.some((p) => p.required) ? { required: query.filter((p) => p.required).map((p) => p.name) } : {}),
      },
      bindingVersion: WS_BINDING_VERSION,
    },
  };
}

export function asyncApiDocument(openApi: ReturnType<typeof openApiDocument>, serverUrl: string) {
  const { host, pathname, protocol } = new URL(serverUrl);
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  for (const [address, item] of Object.entries(openApi.paths as Record<string, { get?: Operation }>)) {
    const handshake = item.get;
    if (!handshake?.["x-websocket"]) continue;
    const native = NATIVE.find((c) => c.address === address);
    const id = native?.id ?? idOf(address);
    const security = (handshake.security ?? []).flatMap((r) => Object.keys(r)).map((name) => ({ $ref: `#/components/securitySchemes/${name}` }));
    const path = (handshake.parameters ?? []).filter((p) => p.in === "path");
    channels[id] = {
      address,
      title: native?.title ?? handshake.summary,
      description: native?.description ?? handshake.description,
      ...(path.length ? { parameters: Object.fromEntries(path.map((p) => [p.name, { description: p.description }])) } : {}),
      ...(native ? { messages: { ...messagesOf(native.receives, "client"), ...messagesOf(native.sends, "server") } } : {}),
      bindings: binding(handshake.parameters ?? []),
    };
    if (!native) continue;
    const refs = (list: Message[], prefix: string) => list.map((m) => ({ $ref: `#/channels/${id}/messages/${prefix}.${m.name}` }));
    operations[`${id}ClientFrames`] = { action: "receive", channel: { $ref: `#/channels/${id}` }, summary: "What the client sends", security, messages: refs(native.receives, "client") };
    operations[`${id}ServerFrames`] = { action: "send", channel: { $ref: `#/channels/${id}` }, summary: "What the server sends", security, messages: refs(native.sends, "server") };
  }
  return {
    asyncapi: "3.0.0",
    info: {
      title: "voxroute WebSocket channels",
      version: CHANNELS_VERSION,
      description: "The WebSocket channels of voxroute; the HTTP endpoints, and each channel's refusals before the upgrade, are in its OpenAPI document (`/openapi.json`).",
    },
    servers: { voxroute: { host, pathname: pathname.replace(/\/$/, "") || undefined, protocol: protocol === "https:" || protocol === "wss:" ? "wss" : "ws", description: "This deployment" } },
    defaultContentType: "application/json",
    channels,
    operations,
    components: { securitySchemes: SCHEMES },
  };
}
