// The floors bench/upgrades.ts measures an upgrade against: UPGRADE_FLOOR=bare, a plain Bun server
// that upgrades and sends one frame in `open`; UPGRADE_FLOOR=elysia, an Elysia app with one empty
// `.ws()` route that sends the same frame. Prints its URL, serves until killed.
import { Elysia } from "elysia";

const READY = JSON.stringify({ type: "service.tts_session_ready" });

function bare() {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req, srv) {
      if (srv.upgrade(req)) return;
      return new Response("upgrade expected", { status: 426 });
    },
    websocket: { open: (ws) => void ws.send(READY), message() {} },
  });
}

function elysia() {
  const app = new Elysia().ws("/v1/tts", { open: (ws) => void ws.raw.send(READY), message() {} });
  app.listen({ port: 0, hostname: "127.0.0.1" });
  return app.server!;
}

const server = process.env.UPGRADE_FLOOR === "elysia" ? elysia() : bare();
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
