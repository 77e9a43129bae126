import { type Env, integer } from "./env.ts";

// How the router treats the providers it sends work to: when a binding's circuit opens, and the
// local recognizer's capacity.

export interface ProviderHealthConfig {
  failureThreshold: number;
  cooldownMs: number;
  cooldownMaxMs: number;
}

export interface LocalSttConfig {
  perWorker: number;
  queue: number;
  waitMs: number;
}

export function providerHealth(env: Env): ProviderHealthConfig {
  const cooldownMs = integer(env, "PROVIDER_COOLDOWN_MS", 5_000, 1);
  const cooldownMaxMs = integer(env, "PROVIDER_COOLDOWN_MAX_MS", 60_000, 1);
  if (cooldownMaxMs < cooldownMs) throw new Error(`config: PROVIDER_COOLDOWN_MAX_MS (${cooldownMaxMs}) must be at least PROVIDER_COOLDOWN_MS (${cooldownMs})`);
  return { failureThreshold: integer(env, "PROVIDER_FAILURE_THRESHOLD", 3), cooldownMs, cooldownMaxMs };
}

export function localStt(env: Env, audioWorkers: number): LocalSttConfig {
  // Three per worker: 6 decoders (~560 MiB) and ~1.1 cores of real-time decoding on two workers,
  // which leaves room for everything else within 1.5 GiB and two cores.
  const perWorker = integer(env, "LOCAL_STT_DECODERS_PER_WORKER", 3, 1);
  return { perWorker, queue: integer(env, "LOCAL_STT_QUEUE", perWorker * audioWorkers), waitMs: integer(env, "LOCAL_STT_QUEUE_WAIT_MS", 2000) };
}
