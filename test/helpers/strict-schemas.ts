import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";

// The schemas of a published document (OpenAPI or AsyncAPI), checked strictly: JSON Schema
// 2020-12 with formats, and every object closed, so a member the document does not name fails
// (the published documents leave objects open, for clients to be lenient).

type Json = Record<string, any>;
const ID = "https://voxroute.test/document.json";

/** A copy where every object schema with `properties` and no `additionalProperties` allows no others. */
function closed(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closed);
  if (!node || typeof node !== "object") return node;
  const copy = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, closed(v)])) as Json;
  if (copy.type === "object" && copy.properties && copy.additionalProperties === undefined) copy.additionalProperties = false;
  return copy;
}

/** What is wrong with a value against the schema at `segments` of the document (none when it validates). */
export function strictSchemas(doc: Json): (segments: string[], value: unknown) => string | undefined {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...(closed(doc) as Json), $id: ID });
  return (segments, value) => {
    const pointer = segments.map((s) => encodeURIComponent(s.replaceAll("~", "~0").replaceAll("/", "~1"))).join("/");
    const validate = ajv.compile({ $ref: `${ID}#/${pointer}` });
    return validate(value) ? undefined : `${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 300)}`;
  };
}
