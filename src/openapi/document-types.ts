// The few OpenAPI 3.1 shapes the document is built from. Loose on purpose: the document is data,
// checked by `redocly lint` and by tests against the running app (test/openapi-*.test.ts).

/** A JSON Schema (2020-12, as OpenAPI 3.1 has it), or a reference to one of the components. */
export type Schema = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: "query" | "path" | "header";
  description: string;
  required?: boolean;
  schema: Schema;
  style?: "form" | "deepObject";
  explode?: boolean;
}

/** A Media Type Object; `x-json-lines`: the body is one JSON value of `schema` per line (newline-delimited JSON). */
export interface MediaType {
  schema: Schema;
  "x-json-lines"?: true;
}

/** An OpenAPI Response Object (not a fetch Response). */
export interface ResponseObject {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaType>;
}

export interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security?: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { description?: string; required: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, ResponseObject>;
  deprecated?: boolean;
  /** WebSocket handshakes: the channel, its frames' documentation, and that 101 is its success. */
  "x-websocket"?: { channel: string; docs: string };
}

export type PathItem = Partial<Record<"get" | "post" | "delete", Operation>>;

/** One room of the document: its paths and the component schemas they refer to. */
export interface DocumentPart {
  paths: Record<string, PathItem>;
  schemas?: Record<string, Schema>;
}
