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
