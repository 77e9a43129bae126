import type { FaultControl, FaultMode } from "./fault-modes.ts";

// A fake's run-time faults over HTTP, for a fake that runs in its own process (benchmarks break a
// provider while sessions run). On a port of its own, so that a fake refusing every connection can
// still be healed. `POST /fault` with a FaultMode as JSON (or `null`: healed); `POST /mid-stream`
// with the fake's mid-stream fault (or `null`), when the fake has one; `GET /arrivals` →
// `{"arrivals": n}`, the requests, handshakes and refused connections that reached the fake so far.

export function serveFaultControl(faults: FaultControl, midStream?: (fault: never) => void): string {
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      const path = new URL(req.url).pathname;
      if (req.method === "GET" && path === "/arrivals") return Response.json({ arrivals: faults.arrivals });
      if (req.method === "POST" && path === "/fault") {
        await faults.set(((await req.json()) as FaultMode | null) ?? undefined);
        return new Response(null, { status: 204 });
      }
      if (req.method === "POST" && path === "/mid-stream" && midStream) {
        midStream(((await req.json()) ?? undefined) as never);
        return new Response(null, { status: 204 });
      }
      return new Response("not found", { status: 404 });
    },
  });
  return `http://127.0.0.1:${server.port}`;
}
