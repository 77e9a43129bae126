import type { Server, ServerWebSocket } from "bun";
import type { AppContext } from "../context.ts";
import { enterRequest, requestIdFor } from "../request-context.ts";
import { errorAnswer } from "./error-answer.ts";
import { markRetryVerdict } from "./retry-verdict.ts";
import type { requestGate } from "./request-gate.ts";
import { chosenProtocol } from "./ws-subprotocols.ts";

// The WebSocket channels are served ahead of Elysia: Bun matches their paths natively, and a
// handshake goes straight to its route's admission and `server.upgrade`, then Bun's socket
// callbacks to the route's handlers. Through Elysia, every upgrade paid for its context (headers
// copied into an object, the query parsed, hooks composed), a copy of that context as the socket's
// data, and a wrapper object with fifteen bound methods for each socket callback: four times a
// plain Bun upgrade's main-thread time. What a handshake sees is what Elysia's route gave: the
// request id on every answer (the 101 included), the shutdown gate, refusals in the path's envelope
// with the retry verdict, one request log line and its metrics. A request that is no handshake
// (the channel's 426 to a plain GET) goes on to the app.

/** What Bun calls on an open socket, the route's own: found through the socket's data, which carries them (`ws.data.open(ws)`, …). */
export interface SocketHandlers<D> {
  open(ws: ServerWebSocket<D>): void;
  /** A client frame as Bun delivers it: text as a string, binary as a Buffer. */
  message(ws: ServerWebSocket<D>, frame: string | Buffer): void;
  drain?(ws: ServerWebSocket<D>): void;
  close(ws: ServerWebSocket<D>): void;
}

/** A WebSocket channel: its path, its handshake, and its socket's handlers. */
export interface SocketRoute<D extends object> {
  /** The path as Bun matches it (`:name` for a parameter), the surface's prefix included. */
  path: string;
  /** The subprotocol the upgrade names when the client offers it (ws-subprotocols.ts); without one, the upgrade names none. */
  protocol?: string;
  /** The handshake's admission, which becomes the socket's data; what it throws is answered as HTTP, before the upgrade. */
  admit(request: Request, query: URLSearchParams, params: Record<string, string>, server: Server<unknown>): Promise<D>;
  socket: SocketHandlers<D>;
}

/** What serving a handshake takes from the app: its gate, its request log, and the app itself for what is no handshake. */
export interface SocketServing {
  gate: ReturnType<typeof requestGate>;
  /** The request being served was answered with `status` by `route` (request-log.ts). */
  answered: (route: string | undefined, status: number) => void;
  app: (request: Request, server: Server<unknown>) => Response | Promise<Response>;
}

type Handler = (request: Request, server: Server<unknown>) => Response | undefined | Promise<Response | undefined>;

/** The routes' sockets, as the `routes` of Bun's server: a handshake is upgraded here, anything else answered by the app. */
// biome-ignore lint/suspicious/noExplicitAny: each route has its own socket data
export function serveSockets(ctx: AppContext, routes: SocketRoute<any>[], serving: SocketServing): Record<string, { GET: Handler }> {
  const served: Record<string, { GET: Handler }> = {};
  for (const plain of routes) {
    const route = { ...plain, socket: guarded(ctx, plain.socket) };
    const GET: Handler = (request, server) => (request.headers.get("upgrade") === "websocket" ? handshake(ctx, serving, route, request, server) : serving.app(request, server));
    served[route.path] = { GET };
    // Also with a trailing slash, which the app's router took for the same route (the app drops a
    // route's trailing slash from Bun's routes, so it is matched as the path's subtree, and only it is the channel).
    const segments = route.path.split("/").length + 1;
    served[`${route.path}/*`] = {
      GET: (request, server) => {
        const path = new URL(request.url).pathname;
        return path.endsWith("/") && path.split("/").length === segments ? GET(request, server) : serving.app(request, server);
      },
    };
  }
  return served;
}

async function handshake<D extends object>(ctx: AppContext, { gate, answered }: SocketServing, route: SocketRoute<D>, request: Request, server: Server<unknown>): Promise<Response | undefined> {
  const requestId = requestIdFor(request);
  const url = new URL(request.url);
  enterRequest(requestId, request, url.pathname);
  const headers: Record<string, string> = { "x-request-id": requestId };
  const refused = gate(request);
  if (refused) return refusal(answered, undefined, refused, headers);
  let data: D;
  try {
    data = await route.admit(request, url.searchParams, (request as Request & { params: Record<string, string> }).params, server);
  } catch (error) {
    return refusal(answered, route.path, errorAnswer(ctx, url.pathname, error), headers);
  }
  // None named, the header is set empty, which Bun leaves out; unset, Bun would name the first offered, key and all.
  if (route.protocol) headers["sec-websocket-protocol"] = chosenProtocol(request, route.protocol) ?? "";
  Object.assign(data, route.socket);
  if (!server.upgrade(request, { headers, data })) return refusal(answered, route.path, new Response("Expected a websocket connection", { status: 400 }), headers);
  answered(route.path, 200);
  return undefined;
}

/** A handshake answered as HTTP: with the request id and the retry verdict, logged once. */
function refusal(answered: SocketServing["answered"], route: string | undefined, response: Response, headers: Record<string, string>): Response {
  markRetryVerdict(response, { headers });
  for (const name in headers) if (!response.headers.has(name)) response.headers.set(name, headers[name]!);
  answered(route, response.status);
  return response;
}

/** The handlers, each logging what it throws as the app logs an unhandled error, and going on. */
function guarded<D>(ctx: AppContext, socket: SocketHandlers<D>): SocketHandlers<D> {
  const guard =
    <A extends unknown[]>(handler: (...args: A) => void) =>
    (...args: A) => {
      try {
        handler(...args);
      } catch (err) {
        ctx.log.error({ err }, "unhandled error");
      }
    };
  return {
    open: guard(socket.open),
    message: guard(socket.message),
    ...(socket.drain ? { drain: guard(socket.drain) } : {}),
    close: guard(socket.close),
  };
}
