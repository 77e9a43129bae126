import type { Server, TCPSocketListener } from "bun";

// Faults a fake keeps until it is healed, set while it runs (a test breaks a provider, then heals
// it), shared by the fakes so none reinvents them. The one-shot faults of each fake (`fault("500")`,
// for the next request only) are another thing: they stay as they are.
//   refuse:    the port closes every connection as soon as it is made; nothing is read or answered
//   hang:      requests and WebSocket handshakes are taken and never answered (until the client goes)
//   status500: every request and handshake is answered 500, in the provider's own error body
// A fault is an object so that more kinds can carry their settings (e.g. a kind that dies after N bytes).

export type FaultMode = { kind: "refuse" } | { kind: "hang" } | { kind: "status500" };

export interface FaultControl {
  /** The fault every request meets from now on; `undefined` heals the fake (on the same port). */
  set(fault: FaultMode | undefined): Promise<void>;
  readonly current: FaultMode | undefined;
  /** Requests, WebSocket handshakes and refused connections that reached the fake, counted as they come, faulted or not. */
  readonly arrivals: number;
}

type ServeOptions = Parameters<typeof Bun.serve>[0];
type Fetch = (req: Request, server: Server<any>) => Response | undefined | Promise<Response | undefined>;

/** A fake's `Bun.serve` with run-time faults: `server()` is the one listening now (the same port throughout). */
export function serveWithFaults(status500: () => Response, options: ServeOptions): { server: () => Server<any>; faults: FaultControl; stop(): void } {
  let current: FaultMode | undefined;
  let arrivals = 0;
  const own = (options as { fetch: Fetch }).fetch;
  const fetch: Fetch = (req, srv) => {
    arrivals++;
    if (current?.kind === "hang") return new Promise((resolve) => req.signal.addEventListener("abort", () => resolve(new Response(null, { status: 499 }))));
    if (current?.kind === "status500") return status500();
    return own(req, srv);
  };
  let server: Server<any> = Bun.serve({ ...options, fetch } as ServeOptions);
  const port = server.port!;
  const hostname = server.hostname ?? "127.0.0.1";
  let refusing: TCPSocketListener | undefined;

  const faults: FaultControl = {
    get current() {
      return current;
    },
    get arrivals() {
      return arrivals;
    },
    async set(fault) {
      if (fault?.kind === "refuse" && !refusing) {
        await server.stop(true);
        refusing = Bun.listen({
          hostname,
          port,
          socket: {
            open(socket) {
              arrivals++;
              socket.terminate();
            },
            data() {},
          },
        });
      } else if (fault?.kind !== "refuse" && refusing) {
        refusing.stop(true);
        refusing = undefined;
        server = Bun.serve({ ...options, fetch, port } as ServeOptions);
      }
      current = fault;
    },
  };
  return {
    server: () => server,
    faults,
    stop: () => {
      refusing?.stop(true);
      void server.stop(true);
    },
  };
}
