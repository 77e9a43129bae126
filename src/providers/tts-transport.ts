import { ProviderError } from "../errors.ts";

/**
 * The `transport` provider option of adapters that have both a streaming WebSocket and a
 * per-utterance HTTP API: `websocket` (the default) or `http`; any other value is the caller's error.
 */
export function ttsTransport(provider: string, options: Record<string, string>): "websocket" | "http" {
  const transport = options.transport ?? "websocket";
  if (transport !== "websocket" && transport !== "http") throw new ProviderError(`${provider} option transport must be websocket or http, not ${JSON.stringify(transport)}`, false);
  return transport;
}
