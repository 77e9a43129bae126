import { readFileSync } from "node:fs";
import type { Server } from "bun";
import type { TlsFiles } from "./config.ts";

// The port: plain HTTP, or HTTPS and WSS with TLS_CERT_FILE / TLS_KEY_FILE (docs/operations.md#tls).
// Bun's `server.reload()` ignores `tls` (oven-sh/bun#43815), so new certificates take a new
// listener on the same port: the old one stops accepting and keeps its open connections (sessions
// go on, with the certificate they were made with) until they end or the server stops.

/** A certificate chain and its key, PEM, as read from their files. */
export interface TlsPair {
  cert: string;
  key: string;
}

/** Starts listening on `port` with `tls` (none: plain HTTP) and gives the server. */
export type Listen = (port: number, tls: TlsPair | undefined) => Server<unknown>;

/** The files' pair, checked as Bun will serve it: a file that cannot be read, is no PEM or a key not the certificate's is an error saying which. */
export function readTls(files: TlsFiles): TlsPair {
  const read = (name: string, file: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch (err) {
      throw new Error(`config: ${name} ${file} cannot be read: ${(err as Error).message}`);
    }
  };
  const pair = { cert: read("TLS_CERT_FILE", files.certFile), key: read("TLS_KEY_FILE", files.keyFile) };
  try {
    // A throwaway loopback listener: the same checks as the port's, before the port changes hands.
    Bun.serve({ port: 0, hostname: "127.0.0.1", tls: pair, fetch: () => new Response() }).stop(true);
  } catch (err) {
    throw new Error(`config: TLS_CERT_FILE ${files.certFile} and TLS_KEY_FILE ${files.keyFile} are not a PEM certificate and its key: ${(err as Error).message}`);
  }
  return pair;
}

export class Listener {
  private current: Server<unknown>;
  private pair: TlsPair | undefined;
  /** Listeners replaced by a reload, until their last connection ends. */
  private readonly draining = new Set<Server<unknown>>();

  constructor(
    private readonly listen: Listen,
    port: number,
    private readonly files: TlsFiles | undefined,
  ) {
    this.pair = files && readTls(files);
    this.current = listen(port, this.pair);
  }

  get server(): Server<unknown> {
    return this.current;
  }

  get scheme(): "https" | "http" {
    return this.files ? "https" : "http";
  }

  /**
   * Reads the files again and serves new connections with them. A pair that cannot serve is an
   * error and the current one goes on serving; without TLS there is nothing to reload (false).
   */
  reloadTls(): boolean {
    if (!this.files) return false;
    const pair = readTls(this.files);
    const old = this.current;
    const port = old.port!;
    old.stop(false).then(() => this.draining.delete(old));
    this.draining.add(old);
    try {
      this.current = this.listen(port, pair);
    } catch (err) {
      this.current = this.listen(port, this.pair);
      throw err;
    }
    this.pair = pair;
    return true;
  }

  /** Stops every listener, closing what is still open on them. */
  stop(): void {
    for (const server of this.draining) server.stop(true);
    this.current.stop(true);
  }
}
