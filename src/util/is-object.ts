/** A JSON object (not null, not an array): what a parsed body or frame must be before its members are read. */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
