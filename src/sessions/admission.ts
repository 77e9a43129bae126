import type { Lexicon } from "../pronunciation/lexicon.ts";
import type { Outcome } from "../ledger/activity.ts";
import type { Meter } from "../ledger/meter.ts";
import type { MeteredRequest } from "../ledger/metered-request.ts";
import type { Payer } from "../ledger/meter-types.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import type { Candidate } from "../routing/candidate.ts";
import type { ProviderHealth } from "../routing/health.ts";

// What every session (TTS, STT, STT passthrough) is given, and how it is admitted.

/** The outcome of auth, routing and billing admission: the candidates in order (each with its voice, TTS), and the request's meter. */
export interface Admission {
  candidates: Candidate[];
  meter: MeteredRequest;
  /** The payer's pronunciation dictionaries the request names, applied to the text before any provider (docs/pronunciation.md). */
  lexicon?: Lexicon;
}

/** A session's providers, its port to the client, and the server's facilities. */
export interface SessionDeps<Provider, Port> {
  provider: (id: string) => Provider | undefined;
  port: Port;
  log: Logger;
  metrics: Metrics;
  connectTimeoutMs: number;
  /** The router's provider health: open circuits are skipped, each attempt reports to it. */
  health: ProviderHealth;
  surface: string;
  /** How the client is served: a WebSocket (the default) or a streamed HTTP body (for logs and metrics). */
  transport?: "ws" | "http";
}

/**
 * Runs a session's admission. Undefined when it failed (`fail` has reported it) or when the
 * session ended while it ran (`ended`: how; the request is then recorded unbilled and its hold released).
 */
export async function admitSession(admit: () => Promise<Admission>, fail: (err: unknown) => Promise<void>, ended: () => Outcome | undefined, startedAt: Date): Promise<Admission | undefined> {
  let admission: Admission;
  try {
    admission = await admit();
  } catch (err) {
    await fail(err);
    return undefined;
  }
  const outcome = ended();
  if (!outcome) return admission;
  await admission.meter.unserved(admission.candidates[0], startedAt, outcome);
  return undefined;
}

/** A session's admission on a payer already admitted: its own meter (and activity record) under `id`; `recheck` asks the balance again. */
export async function meteredSession(meter: Meter, id: string, payer: Payer, candidates: Candidate[], surface: string, recheck = false): Promise<Admission> {
  const affordable = recheck ? await meter.admit(payer, candidates) : candidates;
  const metered = meter.start(id, payer, surface);
  metered.prefetch(affordable[0]!);
  return { candidates: affordable, meter: metered };
}
