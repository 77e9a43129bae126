import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";

// Checks a real answer against the OpenAPI document: its status is documented for the operation,
// its media type is one the operation answers with, its documented headers are there, and a JSON
// body validates against the documented schema (JSON Schema 2020-12, formats checked). Objects
// are checked closed: a member the document does not name fails, so the document names every
// field the server sends (the published document leaves them open, for clients to be lenient).

type Json = Record<string, any>;

/** What a server answered: a Response's parts, or a WebSocket upgrade's (whose 101 no Response can hold). */
export interface Answer {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

export const answerOf = async (res: Response): Promise<Answer> => ({ status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) });
const ID = "https://voxroute.test/openapi.json";

/** A copy where every object schema with `properties` and no `additionalProperties` allows no others. */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (!node || typeof node !== "object") return node;
  const copy = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, closed(v)])) as Json;
  if (copy.type === "object" && copy.properties && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

const pointer = (...segments: string[]) => segments.map((s) => encodeURIComponent(s.replaceAll("~", "~0").replaceAll("/", "~1"))).join("/");
const mediaType = (contentType: string | null) => (contentType ?? "").split(";")[0]!.trim().toLowerCase();

export function documentedAnswers(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...(closed(doc) as Json), $id: ID });

  /** What is wrong with the answer to `METHOD template`, as one line each; none when it is as documented. */
  return function mismatches(res: Answer, method: string, template: string): string[] {
    const where = `${method} ${template} → ${res.status}`;
    const operation = doc.paths[template]?.[method.toLowerCase()];
    if (!operation) return [`${where}: no such operation in the document`];
    const documented = operation.responses[String(res.status)];
    const { body } = res;
    if (!documented) return [`${where}: status not documented (${new TextDecoder().decode(body).slice(0, 200)})`];
    const found: string[] = [];
    for (const [name, header] of Object.entries((documented.headers ?? {}) as Json)) {
      const value = res.headers.get(name);
      if (name === "x-request-id" && !value) found.push(`${where}: no x-request-id`);
      if (header.$ref?.endsWith("/ShouldRetry") && value !== "false") found.push(`${where}: x-should-retry is ${value}`);
    }
    const content = (documented.content ?? {}) as Json;
    if (!Object.keys(content).length) return body.length ? [...found, `${where}: a body where none is documented`] : found;
    const type = Object.keys(content).find((t) => t.toLowerCase() === mediaType(res.headers.get("content-type")));
    if (!type) return [...found, `${where}: content-type ${res.headers.get("content-type")} is not one of ${Object.keys(content).join(", ")}`];
    if (type !== "application/json") return found;
    const path = pointer("paths", template, method.toLowerCase(), "responses", String(res.status), "content", type, "schema");
    const validate = ajv.compile({ $ref: `${ID}#/${path}` });
    const value = JSON.parse(new TextDecoder().decode(body));
    if (!validate(value)) found.push(`${where}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 300)}`);
    return found;
  };
}
