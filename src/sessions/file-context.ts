import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Meter } from "../ledger/meter.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import type { ProviderHealth } from "../routing/health.ts";
import type { SttProvider } from "../providers/stt-types.ts";
import type { FilePool } from "../pools/file-pool.ts";
import type { SessionRegistry } from "./registry.ts";
import type { VadLanes } from "./router-turns.ts";

/** What every session of the app needs of it, whatever its kind (the surfaces' `AppContext` has all of it). */
export interface SessionServices {
  log: Logger;
  metrics: Metrics;
  health: ProviderHealth;
  catalogue: Catalogue;
  meter: Meter;
  sttProviders: Map<string, SttProvider>;
  vadLanes: VadLanes;
  sessions: SessionRegistry;
}

/**
 * What transcribing a file takes of the app, named here so that the sessions need not import the
 * surfaces' context, which imports them.
 */
export interface FileSessionContext extends SessionServices {
  config: { providerConnectTimeoutMs: number };
  /** Measures and decodes uploaded audio files off the event loop. */
  files: FilePool;
}
