// The floor a JS router can reach on this machine: a plain Bun server that relays a /v1/tts
// session to the upstream with the same hops as the router (client WebSocket → HTTP request per
// text → audio streamed back as binary frames), and nothing else: no auth, no routing, no
// metering, no database. Prints its URL, serves until killed. UPSTREAM_URL: an OpenAI-style
// `/audio/speech`; UPSTREAM_KEY its key.

const upstream = process.env.UPSTREAM_URL!;
const key = process.env.UPSTREAM_KEY ?? "";

interface Relay {
  speaking: Promise<void>;
  closeAsked: boolean;
}

const server = Bun.serve<Relay>({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req, srv) {
    if (srv.upgrade(req, { data: { speaking: Promise.resolve(), closeAsked: false } })) return;
    return new Response("upgrade expected", { status: 426 });
  },
  websocket: {
    open(ws) {
      ws.send(JSON.stringify({ type: "service.tts_session_ready" }));
    },
    message(ws, message) {
      const frame = JSON.parse(String(message)) as { type: string; text?: string };
      if (frame.type === "text") {
        const previous = ws.data.speaking;
        ws.data.speaking = (async () => {
          const res = fetch(`${upstream}/audio/speech`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "tts-1", voice: "alloy", input: frame.text, response_format: "pcm" }),
          });
          await previous;
          for await (const chunk of (await res).body!) ws.send(chunk);
        })();
      } else if (frame.type === "close") {
        void ws.data.speaking.then(() => ws.close(1000, "tts_complete"));
      }
    },
  },
});
console.log(JSON.stringify({ url: `http://127.0.0.1:${server.port}` }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});

export {}; // a module: its names are its own
