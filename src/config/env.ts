import type { EnvReader } from "../providers/home.ts";

// How the configuration reads environment variables: the rules every setting, and every
// provider's settings, are read by, and the messages a bad value stops the start with.

export type Env = Record<string, string | undefined>;

export function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`config: ${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

export function decimal(env: Env, name: string, fallback: string): string {
  const raw = env[name] ?? fallback;
  if (!/^\d+(\.\d{1,6})?$/.test(raw)) throw new Error(`config: ${name} must be a USD amount with at most 6 decimals, got "${raw}"`);
  return raw;
}

export function flag(env: Env, name: string): boolean {
  return ["1", "true", "yes", "on"].includes((env[name] ?? "").toLowerCase());
}

/** The environment as providers read it: the same rules and messages as the settings above. */
export function envReader(env: Env): EnvReader {
  return {
    text: (name) => env[name],
    url: (name) => env[name]?.replace(/\/+$/, "") || undefined,
    flag: (name) => flag(env, name),
    integer: (name, fallback, min) => integer(env, name, fallback, min),
    usd: (name) => (env[name] ? decimal(env, name, "0") : undefined),
    list: (name) =>
      (env[name] ?? "")
        .split(",")
        .map((m) => m.trim())
        .filter(Boolean),
  };
}
