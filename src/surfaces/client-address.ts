import type { Server } from "bun";
import type { Config } from "../config.ts";

/**
 * The address a request came from, as every per-address limit counts it: behind a proxy the
 * operator trusts (`TRUST_PROXY`), from `X-Forwarded-For`; otherwise the peer's own address.
 */
export function clientAddress(config: Pick<Config, "trustProxy">, request: Request, server: Server<unknown> | null | undefined): string {
  const forwarded = config.trustProxy ? request.headers.get("x-forwarded-for")?.split(",")[0]?.trim() : undefined;
  return forwarded || server?.requestIP(request)?.address || "unknown";
}
