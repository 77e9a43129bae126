// The floor for relaying a realtime STT session: a plain Bun server that pipes each client
// WebSocket to its own upstream WebSocket (UPSTREAM_URL) and back, frames as they are; frames sent
// before the upstream is open wait in order. No auth, no parsing, no metering. Prints its URL.

const upstreamUrl = process.env.UPSTREAM_URL!;

interface Pipe {
  upstream: WebSocket;
  waiting: (string | Uint8Array)[];
}

const server = Bun.serve<Pipe>({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req, srv) {
    const upstream = new WebSocket(upstreamUrl);
    upstream.binaryType = "arraybuffer";
    if (srv.upgrade(req, { data: { upstream, waiting: [] } })) return;
    upstream.close();
    return new Response("upgrade expected", { status: 426 });
  },
  websocket: {
    open(ws) {
      const { upstream } = ws.data;
      upstream.onopen = () => {
        for (const frame of ws.data.waiting) upstream.send(frame);
        ws.data.waiting = [];
      };
      upstream.onmessage = (e) => ws.send(typeof e.data === "string" ? e.data : new Uint8Array(e.data));
      upstream.onclose = () => ws.close(1000);
    },
    message(ws, frame) {
      const { upstream } = ws.data;
      if (upstream.readyState === WebSocket.OPEN) upstream.send(frame);
      else ws.data.waiting.push(frame);
    },
    close(ws) {
      ws.data.upstream.close();
    },
  },
});
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});

export {}; // a module: its names are its own
