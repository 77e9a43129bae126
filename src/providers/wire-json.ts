/**
 * A JSON object as an upstream sent it. Typed loosely on purpose: adapters read it field by
 * field and check each field where they use it (`typeof`, comparisons), as a wire format demands.
 */
// biome-ignore lint/suspicious/noExplicitAny: read field by field, each field checked where it is used
export type WireJson = Record<string, any>;
