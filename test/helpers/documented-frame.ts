import { strictSchemas } from "./strict-schemas.ts";

// Checks WebSocket frames against the AsyncAPI document: a binary frame where the channel has a
// binary message that way, a JSON frame against the message of its `type`, strictly
// (strict-schemas.ts). Remembers which messages it has seen, so a test can tell what went unused.

type Json = Record<string, any>;
export type Frame = Uint8Array | Record<string, unknown>;

export function documentedFrames(doc: Json) {
  const problem = strictSchemas(doc);
  const seen = new Set<string>();

  /** What is wrong with a frame sent on `channel` by the client or the server; nothing when it is as documented. */
  function mismatches(channel: string, from: "client" | "server", frame: Frame): string[] {
    const messages = Object.entries((doc.channels[channel]?.messages ?? {}) as Json).filter(([key]) => key.startsWith(`${from}.`));
    const binary = frame instanceof Uint8Array;
    const found = binary ? messages.find(([, m]) => m.contentType === "application/octet-stream") : messages.find(([, m]) => m.payload?.properties?.type?.const === frame.type);
    const what = `${channel}: a ${binary ? "binary" : `${String(frame.type)}`} frame from the ${from}`;
    if (!found) return [`${what}, which the document has no message for`];
    seen.add(`${channel}/${found[0]}`);
    if (binary) return [];
    const wrong = problem(["channels", channel, "messages", found[0], "payload"], frame);
    return wrong ? [`${what}: ${wrong}`] : [];
  }

  /** The channel's messages that no checked frame matched. */
  const unseen = (channel: string, from: "client" | "server") =>
    Object.keys((doc.channels[channel]?.messages ?? {}) as Json).filter((key) => key.startsWith(`${from}.`) && !seen.has(`${channel}/${key}`));

  return { mismatches, unseen };
}
