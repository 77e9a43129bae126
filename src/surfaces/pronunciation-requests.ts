import { ApiError } from "../errors.ts";
import { rulesOfPls } from "../pronunciation/pls.ts";
import { type Rule, rulesOf } from "../pronunciation/rules.ts";
import { isObject } from "../util/is-object.ts";
import { BODY_LIMITS, formBody, jsonBody } from "./request-body.ts";

// The bodies of the pronunciation dictionary endpoints, read the same way on `/el` and `/v1`
// (docs/pronunciation.md): a new dictionary from JSON rules or from a PLS file in a form, rules to
// add, strings whose rules go, a new name.

export interface NewDictionary {
  name: string;
  description?: string;
  rules: Rule[];
}

const NAME_MAX = 200;
const DESCRIPTION_MAX = 1_000;

function name(value: unknown): string {
  if (typeof value !== "string" || !value.trim() || value.length > NAME_MAX) throw new ApiError("invalid_request", `name must be a string of 1 to ${NAME_MAX} characters`, { param: "name" });
  return value;
}

function description(value: unknown): { description?: string } {
  if (value === undefined || value === null || value === "") return {};
  if (typeof value !== "string" || value.length > DESCRIPTION_MAX)
    throw new ApiError("invalid_request", `description must be a string of at most ${DESCRIPTION_MAX} characters`, { param: "description" });
  return { description: value };
}

async function objectBody(request: Request): Promise<Record<string, unknown>> {
  const body = await jsonBody(request, BODY_LIMITS.dictionary);
  if (!isObject(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
  return body;
}

export async function dictionaryOfRules(request: Request): Promise<NewDictionary> {
  const b = await objectBody(request);
  return { name: name(b.name), ...description(b.description), rules: rulesOf(b.rules) };
}

export async function dictionaryOfFile(request: Request): Promise<NewDictionary> {
  const form = await formBody(request, BODY_LIMITS.dictionary);
  const file = form.get("file");
  if (!file || typeof file === "string") throw new ApiError("invalid_request", "file is required: a PLS lexicon", { param: "file" });
  const field = (key: string) => {
    const value = form.get(key);
    return typeof value === "string" ? value : undefined;
  };
  return { name: name(field("name")), ...description(field("description")), rules: rulesOfPls(await file.text()) };
}

export async function rulesToAdd(request: Request): Promise<Rule[]> {
  return rulesOf((await objectBody(request)).rules);
}

export async function stringsToRemove(request: Request): Promise<string[]> {
  const strings = (await objectBody(request)).rule_strings;
  if (!Array.isArray(strings) || strings.length === 0 || !strings.every((s) => typeof s === "string" && s)) {
    throw new ApiError("invalid_request", "rule_strings must be a non-empty array of strings", { param: "rule_strings" });
  }
  return strings as string[];
}

/** `page_size`: 1 to 100, 30 when absent. */
export function pageSizeOf(query: URLSearchParams): number {
  const raw = query.get("page_size");
  if (raw === null) return 30;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new ApiError("invalid_request", "page_size must be a whole number from 1 to 100", { param: "page_size" });
  return n;
}
