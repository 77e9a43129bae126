import { strictSchemas } from "./strict-schemas.ts";

// Checks a real answer against the OpenAPI document: its status is documented for the operation,
// its media type is one the operation answers with, its documented headers are there, and a JSON
// body validates against the documented schema, strictly (strict-schemas.ts).

type Json = Record<string, any>;

/** What a server answered: a Response's parts, or a WebSocket upgrade's (whose 101 no Response can hold). */
export interface Answer {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

export const answerOf = async (res: Response): Promise<Answer> => ({ status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) });

const mediaType = (contentType: string | null) => (contentType ?? "").split(";")[0]!.trim().toLowerCase();

export function documentedAnswers(doc: Json) {
  const problem = strictSchemas(doc);

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
    // Newline-delimited JSON (`x-json-lines`): each line is a value of the schema.
    const text = new TextDecoder().decode(body);
    const values = content[type]["x-json-lines"]
      ? text
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line))
      : [JSON.parse(text)];
    const schema = ["paths", template, method.toLowerCase(), "responses", String(res.status), "content", type, "schema"];
    const wrong = values.map((value) => problem(schema, value)).filter(Boolean);
    return [...found, ...wrong.map((w) => `${where}: ${w}`)];
  };
}
