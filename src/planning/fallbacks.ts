import type { Capability } from "../catalogue/types.ts";
import { ApiError } from "../errors.ts";
import { MAX_FALLBACKS, type ModelChoice } from "../routing/candidate.ts";

export { MAX_FALLBACKS };

// `fallbacks` as the wires give it: a JSON array `[{"model": "…", "voice": "…"}]` in a JSON body
// or a realtime profile, the same array as JSON text in a multipart field or a WebSocket's query.
// Only its shape is checked here; whether each model and voice can serve is the planner's (routing).

const bad = (param: string, why: string) => new ApiError("invalid_request", `${param} ${why}`, { param });

/** A JSON value as a chain of fallbacks; undefined when absent. `param` names the field (a profile's is `pipeline.tts.fallbacks`). */
export function fallbacksOf(value: unknown, capability: Capability, param = "fallbacks"): ModelChoice[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) throw bad(param, "must be an array of {model, voice} objects");
  if (value.length > MAX_FALLBACKS) throw bad(param, `names at most ${MAX_FALLBACKS} models`);
  return value.map((entry, i) => {
    const at = `${param}[${i}]`;
    if (!entry || typeof entry !== "object" || Array.isArray(entry)) throw bad(at, capability === "tts" ? "must be an object {model, voice}" : "must be an object {model}");
    const { model, voice, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) throw bad(`${at}.${unknown}`, "is not a known field");
    if (typeof model !== "string" || !model.trim()) throw bad(`${at}.model`, "must be a model name");
    if (voice === undefined) return { model };
    if (capability === "stt") throw bad(`${at}.voice`, "is not taken: speech to text has no voice");
    if (typeof voice !== "string" || !voice) throw bad(`${at}.voice`, "must be a voice id");
    return { model, voice };
  });
}

/**
 * A multipart field's or a query parameter's values (`getAll`) as a chain of fallbacks: one JSON
 * text; undefined when absent or empty. A second value is refused, not dropped (which one would
 * win is nowhere said), as is a file where the text should be.
 */
export function fallbacksOfText(values: readonly unknown[], capability: Capability, param = "fallbacks"): ModelChoice[] | undefined {
  if (values.length > 1) throw bad(param, "is given more than once: send one JSON array");
  const [text] = values;
  if (text === undefined || text === "") return undefined;
  let value: unknown;
  try {
    if (typeof text !== "string") throw new TypeError("not text");
    value = JSON.parse(text);
  } catch {
    throw bad(param, "must be a JSON array of {model, voice} objects");
  }
  return fallbacksOf(value, capability, param);
}
