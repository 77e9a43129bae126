import type { ServerWebSocket } from "bun";
import { APP_TEST_TLS } from "../fakes/named-tls.ts";

// A wss:// front for the router on loopback, presenting the app.test certificate: OpenAI's SDK
// only speaks wss. Each socket is relayed frame for frame both ways, with its Authorization and
// its subprotocols; the front upgrades only once the router has, answering with the subprotocol
// the router chose, so a router that chooses none fails a client that offered some.

interface Pipe {
  upstream: WebSocket;
  /** Frames for the client until its socket is open here, then the socket. */
  toClient: (string | Uint8Array)[] | ServerWebSocket<Pipe>;
  closed?: { code: number; reason: string };
}

export function tlsFront(target: string) {
  return Bun.serve<Pipe>({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: APP_TEST_TLS.cert, key: APP_TEST_TLS.key },
    async fetch(req, srv) {
      const url = new URL(req.url);
      const offered = (req.headers.get("sec-websocket-protocol") ?? "")
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean);
      const upstream = new WebSocket(`${target}${url.pathname}${url.search}`, { headers: { authorization: req.headers.get("authorization") ?? "" }, protocols: offered } as never);
      upstream.binaryType = "arraybuffer";
      const pipe: Pipe = { upstream, toClient: [] };
      upstream.onmessage = (e) => {
        const frame = typeof e.data === "string" ? e.data : new Uint8Array(e.data as ArrayBuffer);
        if (Array.isArray(pipe.toClient)) pipe.toClient.push(frame);
        else pipe.toClient.send(frame);
      };
      const opened = await new Promise<boolean>((resolve) => {
        upstream.onopen = () => resolve(true);
        upstream.onclose = (e) => {
          pipe.closed = { code: e.code, reason: e.reason };
          if (!Array.isArray(pipe.toClient)) pipe.toClient.close(e.code, e.reason);
          resolve(false);
        };
      });
      if (!opened) return new Response("the router refused the upgrade", { status: 400 });
      const headers = upstream.protocol ? { "sec-websocket-protocol": upstream.protocol } : undefined;
      return srv.upgrade(req, { data: pipe, headers }) ? undefined : new Response("upgrade expected", { status: 426 });
    },
    websocket: {
      open(ws) {
        const pipe = ws.data;
        const waiting = pipe.toClient as (string | Uint8Array)[];
        pipe.toClient = ws;
        for (const frame of waiting) ws.send(frame);
        if (pipe.closed) ws.close(pipe.closed.code, pipe.closed.reason);
      },
      message(ws, frame) {
        ws.data.upstream.send(frame);
      },
      close(ws) {
        ws.data.upstream.close();
      },
    },
  });
}
