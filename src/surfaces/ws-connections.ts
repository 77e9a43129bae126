import type { ServerWebSocket } from "bun";
import type { Lease } from "../limits/limiter.ts";
import type { TraceSpan } from "../tracing/spans.ts";

/** A socket's data as its route keeps it: the handshake's admission (surfaces/ws-admission.ts) and, once open, what the route keeps for it. */
export interface SocketData<C> {
  admission?: { lease?: Lease; closed?: boolean; span?: TraceSpan };
  connection?: C;
}

/** The socket opened: what its route keeps for it, found again in its `message`, `drain` and `close` handlers; the lease of `max_sessions` its handshake took, kept. */
export function keepConnection<C>(ws: ServerWebSocket<SocketData<C>>, connection: C): void {
  ws.data.admission?.lease?.opened();
  ws.data.connection = connection;
}

/** The socket closed: its connection, forgotten, and its session no longer counted against its limits. */
export function takeConnection<C>(ws: ServerWebSocket<SocketData<C>>): C | undefined {
  const { admission } = ws.data;
  if (admission) {
    admission.closed = true;
    admission.lease?.release();
    // A socket closed with no session or conversation to end its span (its key refused after the upgrade, say): it ends here.
    if (admission.span?.claim()) admission.span.end();
  }
  const connection = ws.data.connection;
  ws.data.connection = undefined;
  return connection;
}
