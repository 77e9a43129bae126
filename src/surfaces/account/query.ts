import { ApiError } from "../../errors.ts";

// Strict query parsing for the account endpoints: every bad value is 400 invalid_request, naming
// the parameter.

const bad = (name: string, why: string) => new ApiError("invalid_request", `${name} ${why}`, { param: name });

function onlyKnown(params: URLSearchParams, known: string[], repeatable: string[]): void {
  for (const key of params.keys()) if (!known.includes(key) && !repeatable.includes(key)) throw bad(key, "is not a known parameter");
  for (const key of known) if (params.getAll(key).length > 1) throw bad(key, "is given more than once");
}

/** A request's query, refused (400 naming the parameter) when it holds one not in `known` or `repeatable`, or one of `known` twice. */
export function query(request: Request, known: string[], repeatable: string[] = []): URLSearchParams {
  const params = new URL(request.url).searchParams;
  onlyKnown(params, known, repeatable);
  return params;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

export function timestamp(params: URLSearchParams, name: string): Date | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  const d = new Date(v);
  if (!RFC3339.test(v) || Number.isNaN(d.getTime())) throw bad(name, "must be an RFC 3339 timestamp such as 2026-11-01T00:00:00Z");
  return d;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar day (UTC), as the start of that day. */
export function day(params: URLSearchParams, name: string): Date | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  const d = new Date(`${v}T00:00:00Z`);
  if (!DATE.test(v) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== v) throw bad(name, "must be a date such as 2026-11-01");
  return d;
}

export function text(params: URLSearchParams, name: string, min = 1, max = 200): string | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  if (v.length < min || v.length > max) throw bad(name, `must be ${min} to ${max} characters`);
  return v;
}

export function oneOf<T extends string>(params: URLSearchParams, name: string, values: readonly T[]): T | undefined {
  const v = params.get(name);
  if (v === null) return undefined;
  if (!values.includes(v as T)) throw bad(name, `must be one of ${values.join(", ")}`);
  return v as T;
}

export function integer(params: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
  const v = params.get(name);
  if (v === null) return fallback;
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min || n > max) throw bad(name, `must be an integer from ${min} to ${max}`);
  return n;
}

/** Opaque keyset cursors: base64url JSON of the last item's sort key. */
function encodeCursor(key: { t: number; id: string }): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

/** A page of a listing as the account endpoints answer it: its items, and the cursor of the next (null at the end). */
export function pageBody<T>(page: { items: T[]; next?: { t: number; id: string } | null }): { items: T[]; next_cursor: string | null } {
  return { items: page.items, next_cursor: page.next ? encodeCursor(page.next) : null };
}

export function cursor(params: URLSearchParams, name = "cursor"): { t: number; id: string } | undefined {
  const v = text(params, name, 1, 512);
  if (v === undefined) return undefined;
  try {
    const key = JSON.parse(Buffer.from(v, "base64url").toString("utf8"));
    if (typeof key?.t === "number" && typeof key?.id === "string") return key;
  } catch {}
  throw bad(name, "is not a cursor this endpoint issued");
}

export interface Range {
  start: Date;
  end: Date;
}

/** start defaults to 30 days before end, end to now; start <= end; at most `maxDays` apart. */
export function range(start: Date | undefined, end: Date | undefined, names: [string, string], maxDays = 90): Range {
  const e = end ?? new Date();
  const s = start ?? new Date(e.getTime() - 30 * 86_400_000);
  if (s.getTime() > e.getTime()) throw bad(names[0], `must not be after ${names[1]}`);
  if (e.getTime() - s.getTime() > maxDays * 86_400_000) throw bad(names[0], `must be at most ${maxDays} days before ${names[1]}`);
  return { start: s, end: e };
}
