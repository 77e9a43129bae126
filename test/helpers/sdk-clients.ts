import { ElevenLabsClient } from "@elevenlabs/elevenlabs-js";
import OpenAI from "openai";
import type { ServerOptions } from "../../src/server.ts";
import { startTestServer, type TestServer } from "./server.ts";

// The official SDKs pointed at the router's surfaces, unchanged but for their base URL. No retries:
// a refusal is seen once, as the caller's first answer.

/** The OpenAI SDK on /oai, as `apiKey` (the server's own key unless told). */
export const openAiSdk = (server: TestServer, apiKey = server.key) => new OpenAI({ apiKey, baseURL: `${server.url}/oai`, maxRetries: 0 });

/** The ElevenLabs SDK on /el, as `apiKey` (the server's own key unless told). */
export const elevenLabsSdk = (server: TestServer, apiKey = server.key) => new ElevenLabsClient({ apiKey, baseUrl: `${server.url}/el`, maxRetries: 0 });

/** A test server (startTestServer's arguments) and the OpenAI SDK on it as its own key. */
export async function startServerWithOpenAiSdk(env: Record<string, string> = {}, options: ServerOptions = {}) {
  const server = await startTestServer(env, options);
  return { server, client: openAiSdk(server) };
}

/** A test server (startTestServer's arguments) and the ElevenLabs SDK on it as its own key. */
export async function startServerWithElevenLabsSdk(env: Record<string, string> = {}, options: ServerOptions = {}) {
  const server = await startTestServer(env, options);
  return { server, client: elevenLabsSdk(server) };
}

/**
 * The OpenAI SDK on /oai with its own retries on (3), and the answers /oai gave it: a refusal the
 * SDK must not retry shows as one answer. (The SDK also calls its fetch to probe FormData support.)
 */
export function answerCountingOpenAiSdk(server: TestServer, apiKey: string) {
  const seen: Response[] = [];
  const sdk = new OpenAI({
    apiKey,
    baseURL: `${server.url}/oai`,
    maxRetries: 3,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      if (String(url).startsWith(`${server.url}/oai/`)) seen.push(res);
      return res;
    },
  });
  return { sdk, seen };
}
