import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Command } from "./commands.ts";
import { localCertificate } from "./self-signed.ts";
import { UsageError } from "./errors.ts";

const DEFAULT_HOSTS = ["localhost", "127.0.0.1", "::1"];
const FILES = { ca: "ca.pem", cert: "cert.pem", key: "key.pem" } as const;

/** `tls self-signed`: a local authority and a server certificate for development (docs/operations.md#tls). */
export const tlsSelfSigned: Command = {
  name: "tls self-signed",
  synopsis: "[--dir DIR] [--host NAME ...] [--days N] [--force]",
  summary: "write a certificate for local https/wss and say how clients trust it",
  details: [
    "",
    `Writes DIR/${FILES.ca} (a certificate authority made for this machine: clients trust it), DIR/${FILES.cert} and`,
    `DIR/${FILES.key} (the server's, signed by it) for localhost, 127.0.0.1 and ::1 and each --host. DIR is`,
    "./data/tls unless told; --days (default 365) is how long both are valid. Existing files are kept",
    "unless --force. No database is opened.",
  ].join("\n"),
  offline: true,
  options: { dir: { type: "string" }, host: { type: "string", multiple: true }, days: { type: "string" }, force: { type: "boolean" } },
  async run(ctx, values) {
    const dir = resolve(typeof values.dir === "string" && values.dir ? values.dir : "./data/tls");
    const days = values.days === undefined ? 365 : Number(values.days);
    if (!Number.isInteger(days) || days < 1 || days > 3650) throw new UsageError(`--days must be a whole number of days from 1 to 3650, got ${values.days}`);
    const hosts = [...new Set([...DEFAULT_HOSTS, ...((values.host as string[] | undefined) ?? []).map((h) => h.trim()).filter(Boolean)])];
    const paths = { ca: join(dir, FILES.ca), cert: join(dir, FILES.cert), key: join(dir, FILES.key) };
    const taken = Object.values(paths).filter((p) => existsSync(p));
    if (taken.length && !values.force) throw new UsageError(`${taken.join(", ")} already exist: pass --force to replace them`);
    const made = localCertificate(hosts, days);
    mkdirSync(dir, { recursive: true });
    writeFileSync(paths.ca, made.ca);
    writeFileSync(paths.cert, made.cert);
    writeFileSync(paths.key, made.key, { mode: 0o600 });
    for (const line of [
      `wrote ${paths.ca} (the authority clients trust), ${paths.cert} and ${paths.key} (the server's), for ${hosts.join(", ")}, valid ${days} days`,
      "",
      "1. start the server with them (a running server reads them again on SIGHUP):",
      `   TLS_CERT_FILE=${paths.cert} TLS_KEY_FILE=${paths.key}`,
      "2. trust the authority in a Node or Bun client (the OpenAI and ElevenLabs SDKs included):",
      `   NODE_EXTRA_CA_CERTS=${paths.ca} node app.js`,
      `   curl --cacert ${paths.ca} https://localhost:8080/healthz`,
      "3. point the client at https://localhost:8080 (wss://localhost:8080 for WebSockets)",
    ])
      ctx.print(line);
  },
};
