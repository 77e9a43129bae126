import type { DocumentPart } from "./document-types.ts";
import { failures } from "./error-envelopes.ts";
import { answer, json } from "./operation.ts";
import { constant, integer, object } from "./schema.ts";
import { NO_KEY } from "./security.ts";

// The operator endpoints (surfaces/ops-routes.ts) and this document itself (openapi/routes.ts).

const health = (state: string) => object({ status: constant(state), sessions: integer("Sessions open on this server") });

const document = answer("This OpenAPI 3.1 document", json({ type: "object", description: "An OpenAPI 3.1 document" }));

export const opsPaths: DocumentPart = {
  paths: {
    "/healthz": {
      get: {
        operationId: "health",
        summary: "Liveness, and whether new work is accepted",
        tags: ["operations"],
        security: NO_KEY,
        responses: {
          200: answer("Serving", json(health("ok"))),
          503: answer("Shutting down: open sessions finish, new requests are refused (docs/operations.md)", json(health("shutting_down"))),
        },
      },
    },
    "/metrics": {
      get: {
        operationId: "metrics",
        summary: "Prometheus metrics (docs/operations.md#metrics)",
        tags: ["operations"],
        security: NO_KEY,
        responses: { 200: answer("The Prometheus text exposition format", { "text/plain": { schema: { type: "string" } } }) },
      },
    },
    "/openapi.json": {
      get: { operationId: "openApiDocument", summary: "This document", tags: ["reference"], security: NO_KEY, responses: { 200: document, ...failures("native", {}) } },
    },
    "/asyncapi.json": {
      get: {
        operationId: "asyncApiDocument",
        summary: "The AsyncAPI 3.0 document of the WebSocket channels",
        description: "Each channel's address, query and credentials; the frames of `/v1/tts`, `/v1/stt` and `/v1/realtime` message by message.",
        tags: ["reference"],
        security: NO_KEY,
        responses: { 200: answer("An AsyncAPI 3.0 document", json({ type: "object", description: "An AsyncAPI 3.0 document" })), ...failures("native", {}) },
      },
    },
    "/swagger/json": {
      get: {
        operationId: "openApiDocumentAlias",
        summary: "This document, at its former address",
        description: "The same document as `GET /openapi.json`, kept for links made before it.",
        tags: ["reference"],
        security: NO_KEY,
        deprecated: true,
        responses: { 200: document, ...failures("native", {}) },
      },
    },
  },
};
