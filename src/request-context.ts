import { AsyncLocalStorage } from "node:async_hooks";

// The request an answer, a log line or an error body belongs to. app.ts enters a scope per request
// (onRequest); everything that runs on from its handler (sessions started by an HTTP route, the
// error handler) sees its id. Logs read it through the logger's mixin (log.ts).

const scope = new AsyncLocalStorage<{ requestId: string }>();

/** Printable ASCII, at most 200 characters: a client's id is echoed only if it is that. */
const ACCEPTABLE = /^[\x21-\x7e][\x20-\x7e]{0,199}$/;

/** The client's `x-request-id` when it is a sane one, else a new `req_<uuid>`. */
export function requestIdFor(request: Request): string {
  const sent = request.headers.get("x-request-id")?.trim();
  return sent && ACCEPTABLE.test(sent) ? sent : `req_${crypto.randomUUID()}`;
}

/** Makes `requestId` the current request for the rest of this request's work. */
export function enterRequest(requestId: string): void {
  scope.enterWith({ requestId });
}

/**
 * `{request_id}` of the request being served, for the logger of work that outlives it (a
 * WebSocket session's lines are written from socket callbacks, outside the request's scope).
 */
export function requestBinding(): { request_id?: string } {
  const requestId = currentRequestId();
  return requestId ? { request_id: requestId } : {};
}

/** The id of the request being served, if any. */
export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}
