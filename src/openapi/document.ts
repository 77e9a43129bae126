import { version } from "../../package.json";
import { accountPaths } from "./account-paths.ts";
import { limitsPaths } from "./limits-paths.ts";
import { cataloguePaths } from "./catalogue-paths.ts";
import { customVoicePaths } from "./custom-voice-paths.ts";
import { pronunciationPaths } from "./pronunciation-paths.ts";
import type { DocumentPart } from "./document-types.ts";
import { elEnginePaths } from "./el-engine-paths.ts";
import { elSpeechPaths } from "./el-speech-paths.ts";
import { elUserPaths } from "./el-user-paths.ts";
import { elVoicePaths } from "./el-voice-paths.ts";
import { ERROR_SCHEMAS } from "./error-envelopes.ts";
import { oaiPaths } from "./oai-paths.ts";
import { opsPaths } from "./ops-paths.ts";
import { paymentPaths } from "./payment-paths.ts";
import { realtimePaths } from "./realtime-paths.ts";
import { telephonyPaths } from "./telephony-paths.ts";
import { SECURITY_SCHEMES } from "./security.ts";
import { speechPaths } from "./speech-paths.ts";

// The OpenAPI 3.1 document of every HTTP endpoint, built from one part per room of the API. Routes
// read their own bodies (`parse: "none"`), so this document, not Elysia, is where their shapes are
// told; test/openapi-routes.test.ts keeps it in step with the app's routes.

export interface DocumentOptions {
  /** `PUBLIC_URL`; without it the server is the document's own origin. */
  publicUrl?: string;
  /** The payment provider this deployment has (`ctx.payments?.id`): its paths are served only then. */
  payments?: string;
}

const TAGS = [
  { name: "catalogue", description: "Providers, models and voices this deployment serves (no key needed)" },
  { name: "speech", description: "Native text to speech and speech to text" },
  { name: "custom voices", description: "Voices cloned from a speaker's recordings" },
  { name: "realtime", description: "Realtime profiles and their conversations" },
  { name: "account", description: "Keys by e-mail code, balance, usage and top-ups" },
  { name: "payments", description: "Where payments come back" },
  { name: "ElevenLabs-compatible", description: "`/el`: ElevenLabs' API for its SDK with the base URL pointed here" },
  { name: "OpenAI-compatible", description: "`/oai`: OpenAI's audio API for its SDK with the base URL pointed here" },
  { name: "operations", description: "Liveness and metrics" },
  { name: "reference", description: "This document" },
];

const DESCRIPTION = `One API for text to speech and speech to text, routed to embedded engines and cloud providers.

- **Surfaces.** Native (\`/v1\`, \`/account\`) errors are flat: \`{"error": "<code>", "message": …}\`. \`/el\` answers in ElevenLabs' \`{"detail": {…}}\` envelope and \`/oai\` in OpenAI's \`{"error": {…}}\`; any other path under either answers 501 after the key and balance checks.
- **WebSockets.** Each channel is listed as the GET that opens it (\`x-websocket\`): 101 when the socket opens, an HTTP error when it is refused before; its frames are in the \`docs/\` file named there, and those of the native channels in the AsyncAPI document at \`/asyncapi.json\`.
- **Retries.** Every 4xx and 501 carries \`x-should-retry: false\`; every answer carries \`x-request-id\`.
- **Billing.** TTS per character, STT per second of audio rounded up; 1 credit = 0.000001 USD.`;

function parts(options: DocumentOptions): DocumentPart[] {
  return [
    cataloguePaths,
    speechPaths,
    customVoicePaths,
    pronunciationPaths,
    realtimePaths,
    telephonyPaths,
    accountPaths,
    limitsPaths,
    paymentPaths(options.payments),
    elSpeechPaths,
    elVoicePaths,
    elEnginePaths,
    elUserPaths,
    oaiPaths,
    opsPaths,
  ];
}

export function openApiDocument(options: DocumentOptions = {}) {
  const all = parts(options);
  return {
    openapi: "3.1.0",
    info: { title: "voxroute", version, description: DESCRIPTION },
    servers: [{ url: options.publicUrl ?? "/", description: "This deployment" }],
    security: [{ bearer: [] }],
    tags: TAGS,
    paths: Object.assign({}, ...all.map((p) => p.paths)),
    components: {
      schemas: Object.assign({ ...ERROR_SCHEMAS }, ...all.map((p) => p.schemas ?? {})),
      securitySchemes: SECURITY_SCHEMES,
      headers: {
        RequestId: { description: "The request's id, also in its log line (`X-Request-Id` sent by the client is kept when it is sane)", schema: { type: "string" } },
        ShouldRetry: { description: "`false`: sending the request again cannot succeed", schema: { const: "false" } },
        RetryAfter: { description: "Seconds to wait before trying again", schema: { type: "integer" } },
      },
    },
  };
}
