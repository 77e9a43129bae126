import type { Schema } from "./document-types.ts";

// JSON Schema shorthands for the document's schemas, so that each reads as the shape it describes.

/** A file field of a multipart body. */
export const file = (description?: string): Schema => ({ type: "string", contentMediaType: "application/octet-stream", ...(description ? { description } : {}) });

/** A reference to a component schema. */
export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

export const string = (description?: string, extra: Schema = {}): Schema => ({ type: "string", ...(description ? { description } : {}), ...extra });
export const integer = (description?: string, extra: Schema = {}): Schema => ({ type: "integer", ...(description ? { description } : {}), ...extra });
export const number = (description?: string, extra: Schema = {}): Schema => ({ type: "number", ...(description ? { description } : {}), ...extra });
export const boolean = (description?: string): Schema => ({ type: "boolean", ...(description ? { description } : {}) });
export const timestamp = (description?: string): Schema => string(description, { format: "date-time" });
export const oneOfValues = (values: readonly string[], description?: string): Schema => ({ type: "string", enum: [...values], ...(description ? { description } : {}) });
export const constant = (value: string | number | boolean): Schema => ({ const: value });
export const array = (items: Schema, description?: string): Schema => ({ type: "array", items, ...(description ? { description } : {}) });
export const nullable = (schema: Schema): Schema => ({ anyOf: [schema, { type: "null" }] });
/** An object whose keys are free (a map) and whose values are `values`. */
export const map = (values: Schema, description?: string): Schema => ({ type: "object", additionalProperties: values, ...(description ? { description } : {}) });

/** An object: every member of `required` must be present, those of `optional` may be. */
export function object(required: Record<string, Schema>, optional: Record<string, Schema> = {}, description?: string): Schema {
  const names = Object.keys(required);
  return {
    type: "object",
    ...(description ? { description } : {}),
    properties: { ...required, ...optional },
    ...(names.length ? { required: names } : {}),
  };
}
