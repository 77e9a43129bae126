// The page is a client of the public API only: every call goes through here, with the key held in
// the page (session.ts), never in a URL.

/** An answer in the native envelope `{error, message, param}`. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

export interface Call {
  method?: string;
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export async function api<T>(path: string, call: Call = {}): Promise<T> {
  const headers: Record<string, string> = { ...call.headers };
  if (call.key) headers.authorization = `Bearer ${call.key}`;
  if (call.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(path, { method: call.method ?? (call.body === undefined ? "GET" : "POST"), headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) });
  if (res.status === 204) return undefined as T;
  const answer = await res.json().catch(() => undefined);
  if (!res.ok) throw new ApiFailure(res.status, answer?.error ?? "http_error", answer?.message ?? `${res.status} ${res.statusText}`, answer?.param);
  return answer as T;
}

/** A query string of the values that are set. */
export function queryOf(values: Record<string, string | number | undefined | (string | undefined)[]>): string {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) for (const v of [value].flat()) if (v !== undefined && v !== "") q.append(name, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** What a failure says to a person. */
export const describeFailure = (err: unknown): string => (err instanceof ApiFailure ? `${err.message} (${err.code})` : err instanceof Error ? err.message : String(err));
