import type { Catalogue } from "../catalogue/catalogue.ts";
import type { Meter } from "../ledger/meter.ts";
import type { Logger } from "../log.ts";
import type { Metrics } from "../metrics.ts";
import type { ProviderHealth } from "../routing/health.ts";
import type { SttProvider } from "../providers/types.ts";
import type { FilePool } from "../pools/file-pool.ts";
import type { SessionRegistry } from "./registry.ts";
import type { VadLanes } from "./router-turns.ts";

/**
 * What transcribing a file takes of the app (the surfaces' `AppContext` has all of it), named
 * here so that the sessions need not import the surfaces' context, which imports them.
 */
export interface FileSessionContext {
  config: { providerConnectTimeoutMs: number };
  log: Logger;
  metrics: Metrics;
  health: ProviderHealth;
  catalogue: Catalogue;
  meter: Meter;
  sttProviders: Map<string, SttProvider>;
  /** Measures and decodes uploaded audio files off the event loop. */
  files: FilePool;
  vadLanes: VadLanes;
  sessions: SessionRegistry;
}
