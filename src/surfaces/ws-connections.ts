import type { ServerWebSocket } from "bun";
import type { Lease } from "../limits/limiter.ts";
import type { TraceSpan } from "../tracing/spans.ts";

/** Elysia's view of a socket: the Bun socket underneath is what stays the same across its handlers; its data has the handshake's admission. */
type Socket = { raw: unknown; data?: unknown };

/** The socket's admission (surfaces/ws-admission.ts): the lease of `max_sessions` it took, if any. */
const admissionOf = (ws: Socket) => (ws.data as { admission?: { lease?: Lease; closed?: boolean; span?: TraceSpan } } | undefined)?.admission;

/** What a WebSocket route keeps per open socket, found again in its `message`, `drain` and `close` handlers. */
export class WsConnections<C> {
  private readonly byRaw = new WeakMap<ServerWebSocket<unknown>, C>();

  set(ws: Socket, connection: C): void {
    admissionOf(ws)?.lease?.opened();
    this.byRaw.set(ws.raw as ServerWebSocket<unknown>, connection);
  }

  get(ws: Socket): C | undefined {
    return this.byRaw.get(ws.raw as ServerWebSocket<unknown>);
  }

  /** The socket closed: its connection, forgotten, and its session no longer counted against its limits. */
  take(ws: Socket): C | undefined {
    const admission = admissionOf(ws);
    if (admission) {
      admission.closed = true;
      admission.lease?.release();
      // A socket closed with no session or conversation to end its span (its key refused after the upgrade, say): it ends here.
      if (admission.span?.claim()) admission.span.end();
    }
    const connection = this.get(ws);
    this.byRaw.delete(ws.raw as ServerWebSocket<unknown>);
    return connection;
  }
}
