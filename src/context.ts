import type { KeyView } from "./accounts/key-view.ts";
import type { PaymentProvider } from "./accounts/payments/types.ts";
import type { Signup } from "./accounts/signup.ts";
import type { TopUps } from "./accounts/top-ups.ts";
import type { FilePool } from "./pools/file-pool.ts";
import type { Catalogue } from "./catalogue/catalogue.ts";
import type { Config } from "./config.ts";
import type { Database } from "./db/open.ts";
import type { Meter } from "./ledger/meter.ts";
import type { SpendView } from "./limits/spend-view.ts";
import type { Limiter } from "./limits/limiter.ts";
import type { Logger } from "./log.ts";
import type { Metrics } from "./metrics.ts";
import type { ProviderHealth } from "./routing/health.ts";
import type { TtsCache } from "./sessions/tts-cache/tts-cache.ts";
import type { ClientSecrets } from "./realtime/client-secrets.ts";
import type { PhoneLinks } from "./realtime/phone-links.ts";
import type { RealtimeProfiles } from "./realtime/profiles.ts";
import type { CustomVoices } from "./voices/custom-voices.ts";
import type { PronunciationDictionaries } from "./pronunciation/dictionaries.ts";
import type { TtsProvider } from "./providers/types.ts";
import type { SttProvider } from "./providers/stt-types.ts";
import type { SessionRegistry } from "./sessions/registry.ts";
import type { VadLanes } from "./sessions/router-turns.ts";
import type { VoiceCatalogue } from "./voices/voice-catalogue.ts";
import type { VoicePreviews } from "./voices/voice-previews.ts";

/** What the surfaces are given: built once at start by server.ts. */
export interface AppContext {
  config: Config;
  log: Logger;
  metrics: Metrics;
  /** Each binding's health (its circuit), for the sessions' candidates and `GET /v1/providers`. */
  health: ProviderHealth;
  database: Database;
  /** API keys served lately, kept current every access-check interval: requests are authenticated from it. */
  keys: KeyView;
  catalogue: Catalogue;
  /** Every served provider's voices, built in the background and searched in memory (`GET /v1/voices`). */
  voices: VoiceCatalogue;
  /** Samples of the embedded engines' voices, made once each. */
  voicePreviews: VoicePreviews;
  providers: Map<string, TtsProvider>;
  /** The router's TTS cache: every TTS session's deps carry it. */
  ttsCache: TtsCache;
  sttProviders: Map<string, SttProvider>;
  /** Where the router VAD runs (the audio workers), for the turns of families without a detector. */
  vadLanes: VadLanes;
  /** Measures and decodes uploaded audio files off the event loop. */
  files: FilePool;
  sessions: SessionRegistry;
  /** The one entry point for billing a request. */
  meter: Meter;
  /** Budgeted keys' and tenants' spend, kept current every access-check interval (docs/limits.md#budgets). */
  spend: SpendView;
  signup: Signup;
  topUps: TopUps;
  payments: PaymentProvider | undefined;
  profiles: RealtimeProfiles;
  /** Single-use credentials for `/v1/realtime`; its socket calls `redeem`. */
  clientSecrets: ClientSecrets;
  /** Carriers' numbers pointed at profiles (docs/telephony.md). */
  phoneLinks: PhoneLinks;
  /** Tenants' cloned voices, and where requests for them may go. */
  customVoices: CustomVoices;
  /** The tenants' pronunciation dictionaries (docs/pronunciation.md). */
  pronunciation: PronunciationDictionaries;
  /** Tenants' and keys' `max_sessions` and `requests_per_minute`, counted here or in Redis (docs/limits.md). */
  limits: Limiter;
  /** False once shutdown began: /healthz turns 503 so balancers stop sending traffic. */
  accepting: () => boolean;
}
