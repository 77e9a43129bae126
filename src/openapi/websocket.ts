import type { Operation, Parameter } from "./document-types.ts";
import { failures, type Surface } from "./error-envelopes.ts";
import { query } from "./operation.ts";
import { map, string } from "./schema.ts";

// A WebSocket channel as the HTTP request that opens it: a GET with `Upgrade: websocket`, whose
// success is 101 and whose refusals before the upgrade are HTTP answers in the surface's envelope.
// What flows on the socket is told in the channel's doc (and `x-websocket` names it for tools).

export interface Handshake extends Omit<Operation, "responses" | "x-websocket"> {
  surface: Surface;
  channel: string;
  /** The file of docs/ that holds the channel's frames, events and close codes. */
  docs: string;
  /** The answers before the upgrade, by status. */
  refusals: Record<number, string>;
}

/** Every socket is admitted with its plan's candidates (surfaces/ws-admission.ts): none usable is refused before the upgrade. */
const UNAVAILABLE = "`provider_unavailable`: every candidate's provider is known to be down, its circuit open (`Retry-After`)";

export function handshake({ surface, channel, docs, refusals: own, description, ...operation }: Handshake): Operation {
  const refusals = { ...own, 503: own[503] ? `${own[503]}; ${UNAVAILABLE}` : UNAVAILABLE };
  return {
    ...operation,
    description: `${description}\n\n**WebSocket.** Open it with \`Upgrade: websocket\`; frames, events and close codes are in \`${docs}\`.`,
    "x-websocket": { channel, docs },
    responses: { 101: { description: "Switching Protocols: the socket is open" }, ...failures(surface, refusals) },
  };
}

/** `provider_options[<name>]=<value>`: a provider-native option, which wins over the bare `<name>=<value>`. */
export const PROVIDER_OPTIONS: Parameter = {
  ...query("provider_options", "Provider-native options, as `provider_options[<name>]=<value>` (deepObject is how OpenAPI spells `name[key]=value`)", map(string())),
  style: "deepObject",
  explode: true,
};
