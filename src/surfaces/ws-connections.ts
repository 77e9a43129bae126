import type { ServerWebSocket } from "bun";
import type { Lease } from "../limits/limiter.ts";

/** Elysia's view of a socket: the Bun socket underneath is what stays the same across its handlers; its data has the handshake's admission. */
type Socket = { raw: unknown; data?: unknown };

/** The lease of `max_sessions` the socket's handshake took (surfaces/ws-admission.ts), if any. */
const leaseOf = (ws: Socket) => (ws.data as { admission?: { lease?: Lease } } | undefined)?.admission?.lease;

/** What a WebSocket route keeps per open socket, found again in its `message`, `drain` and `close` handlers. */
export class WsConnections<C> {
  private readonly byRaw = new WeakMap<ServerWebSocket<unknown>, C>();

  set(ws: Socket, connection: C): void {
    leaseOf(ws)?.opened();
    this.byRaw.set(ws.raw as ServerWebSocket<unknown>, connection);
  }

  get(ws: Socket): C | undefined {
    return this.byRaw.get(ws.raw as ServerWebSocket<unknown>);
  }

  /** The socket closed: its connection, forgotten, and its session no longer counted against its limits. */
  take(ws: Socket): C | undefined {
    leaseOf(ws)?.release();
    const connection = this.get(ws);
    this.byRaw.delete(ws.raw as ServerWebSocket<unknown>);
    return connection;
  }
}
