import type { ServerWebSocket } from "bun";

/** Elysia's view of a socket: the Bun socket underneath is what stays the same across its handlers. */
type Socket = { raw: unknown };

/** What a WebSocket route keeps per open socket, found again in its `message`, `drain` and `close` handlers. */
export class WsConnections<C> {
  private readonly byRaw = new WeakMap<ServerWebSocket<unknown>, C>();

  set(ws: Socket, connection: C): void {
    this.byRaw.set(ws.raw as ServerWebSocket<unknown>, connection);
  }

  get(ws: Socket): C | undefined {
    return this.byRaw.get(ws.raw as ServerWebSocket<unknown>);
  }

  /** The socket closed: its connection, forgotten. */
  take(ws: Socket): C | undefined {
    const connection = this.get(ws);
    this.byRaw.delete(ws.raw as ServerWebSocket<unknown>);
    return connection;
  }
}
