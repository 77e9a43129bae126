import { type Env, flag, integer } from "./env.ts";

// The port as clients reach it: TLS on it, and the proxies in front of it.

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

/** TRUST_PROXY_HOPS when set; else TRUST_PROXY=true means one proxy. */
export function trustProxyHops(env: Env): number {
  if (env.TRUST_PROXY_HOPS) return integer(env, "TRUST_PROXY_HOPS", 0);
  return flag(env, "TRUST_PROXY") ? 1 : 0;
}

export function tls(env: Env): TlsFiles | undefined {
  const certFile = env.TLS_CERT_FILE || undefined;
  const keyFile = env.TLS_KEY_FILE || undefined;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new Error("config: TLS_CERT_FILE and TLS_KEY_FILE go together: set both (PEM files) or neither");
  return { certFile, keyFile };
}

/** HTTP_STALL_TIMEOUT_S: how long a client may read nothing of a streamed answer (0: forever); Bun's idle timeout takes at most 255 s. */
export function httpStallTimeoutS(env: Env): number {
  const seconds = integer(env, "HTTP_STALL_TIMEOUT_S", 120);
  if (seconds > 255) throw new Error(`config: HTTP_STALL_TIMEOUT_S must be at most 255 (or 0 for no limit), got "${env.HTTP_STALL_TIMEOUT_S}"`);
  return seconds;
}
