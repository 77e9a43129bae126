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
