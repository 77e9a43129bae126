import { ApiError } from "../errors.ts";
import { isObject } from "../util/is-object.ts";

// A dictionary's rules as ElevenLabs' API writes them (docs/pronunciation.md): `alias` rules say a
// string as other text; `phoneme` rules say it by its phonemes (`alphabet` `ipa` or `cmu-arpabet`),
// with an optional `alias` of our own for providers that take no phonemes. Both match the string
// case-sensitively and as a whole word unless told otherwise.

export interface AliasRule {
  type: "alias";
  string_to_replace: string;
  alias: string;
  case_sensitive: boolean;
  word_boundaries: boolean;
}

export interface PhonemeRule {
  type: "phoneme";
  string_to_replace: string;
  phoneme: string;
  alphabet: string;
  /** Said instead by a provider that takes no phonemes. */
  alias?: string;
  case_sensitive: boolean;
  word_boundaries: boolean;
}

export type Rule = AliasRule | PhonemeRule;

/** Rules per dictionary version, at most. */
export const MAX_RULES = 5_000;
const MAX_STRING = 1_000;

function text(value: unknown, field: string, at: string): string {
  if (typeof value !== "string" || !value || value.length > MAX_STRING) {
    throw new ApiError("invalid_request", `${at}.${field} must be a string of 1 to ${MAX_STRING} characters`, { param: `${at}.${field}` });
  }
  return value;
}

function flag(value: unknown, field: string, at: string): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value !== "boolean") throw new ApiError("invalid_request", `${at}.${field} must be a boolean`, { param: `${at}.${field}` });
  return value;
}

/** One rule from a request body; `at` names it in errors (`rules[3]`). */
export function ruleOf(value: unknown, at: string): Rule {
  if (!isObject(value)) throw new ApiError("invalid_request", `${at} must be an object`, { param: at });
  const common = {
    string_to_replace: text(value.string_to_replace, "string_to_replace", at),
    case_sensitive: flag(value.case_sensitive, "case_sensitive", at),
    word_boundaries: flag(value.word_boundaries, "word_boundaries", at),
  };
  if (value.type === "alias") return { type: "alias", ...common, alias: text(value.alias, "alias", at) };
  if (value.type === "phoneme") {
    const alias = value.alias === undefined || value.alias === null ? undefined : text(value.alias, "alias", at);
    return { type: "phoneme", ...common, phoneme: text(value.phoneme, "phoneme", at), alphabet: text(value.alphabet, "alphabet", at), ...(alias ? { alias } : {}) };
  }
  throw new ApiError("invalid_request", `${at}.type must be alias or phoneme`, { param: `${at}.type` });
}

/** The rules of a request body (`rules`: a non-empty array). */
export function rulesOf(value: unknown, field = "rules"): Rule[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_RULES) {
    throw new ApiError("invalid_request", `${field} must be an array of 1 to ${MAX_RULES} rules`, { param: field });
  }
  return value.map((rule, i) => ruleOf(rule, `${field}[${i}]`));
}
