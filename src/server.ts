import { AudioPool } from "./pools/audio-pool.ts";
import { EnginePool } from "./pools/engine-pool.ts";
import { FilePool } from "./pools/file-pool.ts";
import { KeyView } from "./accounts/key-view.ts";
import { withdrawnKeys } from "./accounts/keys.ts";
import { devOutbox, smtpMailer } from "./accounts/mailer.ts";
import { SandboxPayments } from "./accounts/payments/sandbox.ts";
import { StripePayments } from "./accounts/payments/stripe.ts";
import { Signup, welcomeFromConfig } from "./accounts/signup.ts";
import { TopUps } from "./accounts/top-ups.ts";
import { createApp } from "./app.ts";
import { ClientSecrets } from "./realtime/client-secrets.ts";
import { PhoneLinks } from "./realtime/phone-links.ts";
import { RealtimeProfiles } from "./realtime/profiles.ts";
import { ownVoiceEntries } from "./voices/custom-voice-view.ts";
import { CustomVoices } from "./voices/custom-voices.ts";
import { PronunciationDictionaries } from "./pronunciation/dictionaries.ts";
import { Catalogue, type CatalogueData } from "./catalogue/catalogue.ts";
import { servedCatalogue } from "./providers/served-catalogue.ts";
import type { Config } from "./config.ts";
import type { AppContext } from "./context.ts";
import { openDatabase } from "./db/open.ts";
import { Ledger } from "./ledger/ledger.ts";
import { Limiter } from "./limits/limiter.ts";
import { RedisCounters } from "./limits/redis-counters.ts";
import { Meter } from "./ledger/meter.ts";
import { SpendView } from "./limits/spend-view.ts";
import { type Listen, Listener } from "./listener.ts";
import { createLogger, type Logger } from "./log.ts";
import { feedMetrics } from "./metrics-sources.ts";
import { Metrics } from "./metrics.ts";
import { probeProviders } from "./providers/all.ts";
import { ProviderHealth } from "./routing/health.ts";
import { TtsCache } from "./sessions/tts-cache/tts-cache.ts";
import { engineWorkerOptions, providerAdapters } from "./providers/registry.ts";
import type { TtsProvider } from "./providers/types.ts";
import type { SttProvider } from "./providers/stt-types.ts";
import { AccessWatch } from "./sessions/access-watch.ts";
import { SessionRegistry } from "./sessions/registry.ts";
import { checkVoiceAliases } from "./voices/voice-alias-check.ts";
import { VoiceCatalogue } from "./voices/voice-catalogue.ts";
import { VoiceMetrics } from "./voices/voice-metrics.ts";
import { VoicePreviews } from "./voices/voice-previews.ts";
import { VoiceSightings } from "./voices/voice-sightings.ts";
import { startTracing } from "./tracing/start.ts";

export interface ServerOptions {
  /** Extra catalogue entries and their adapters (tests and benchmarks plug in their own providers). */
  extra?: { catalogue: CatalogueData; providers: TtsProvider[]; sttProviders?: SttProvider[] };
  log?: Logger;
}

export interface RunningServer {
  url: string;
  ctx: AppContext;
  /**
   * Answers new requests 503 (`/healthz` with `shutting_down`) while open sessions finish within
   * the grace period, then closes the rest with 1001 and stops listening.
   */
  stop(graceMs?: number): Promise<void>;
  /** SIGHUP: TLS_CERT_FILE / TLS_KEY_FILE read again for new connections; a pair that cannot serve is logged and the loaded one kept. */
  reloadTls(): void;
}

/** Longest an embedded engine may take to speak a voice's preview. */
const PREVIEW_TIMEOUT_MS = 30_000;

/** Another process listens on the port, and port sharing was not asked for. */
export class PortTakenError extends Error {}

export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.logLevel);
  // Tracing off: the OpenTelemetry SDK is not even loaded.
  const stopTracing = config.tracing ? await startTracing(config.tracing) : undefined;
  // What this machine can serve of the embedded engines (files present, libraries installed).
  const findings = await probeProviders(config.providers, log);
  const served = servedCatalogue(config, findings);
  const extra = options.extra;
  // First: an operator's alias that reaches no served model stops the start before anything is opened.
  const catalogue = new Catalogue({ providers: [...served.providers, ...(extra?.catalogue.providers ?? [])], models: [...served.models, ...(extra?.catalogue.models ?? [])] }, config.aliases);
  const database = await openDatabase(config.databaseUrl);
  const pool = new EnginePool(config.ttsWorkers, engineWorkerOptions(config.providers, findings), log);
  const audioPool = new AudioPool(config.audioWorkers, { ...config.localStt, modelDir: config.providers.pocketsphinx.modelDir }, log, config.cacheDir);
  const files = new FilePool(config.fileWorkers, log);
  const upstream = { connectTimeoutMs: config.providerConnectTimeoutMs, idleTimeoutMs: config.upstreamIdleTimeoutMs, keepAliveMs: config.upstreamKeepAliveMs };
  const adapters = providerAdapters(config.providers, findings, { engines: pool, audio: audioPool, files, upstream });
  const providers = new Map([...adapters.tts, ...(extra?.providers ?? [])].map((p) => [p.id, p]));
  const sttProviders = new Map<string, SttProvider>([...adapters.stt, ...(extra?.sttProviders ?? [])].map((p) => [p.id, p]));
  const metrics = new Metrics();
  const sessions = new SessionRegistry(metrics);
  const health = new ProviderHealth(config.providerHealth, log);
  metrics.watchBindings(() => catalogue.bindings.map((b) => ({ provider: b.provider.id, model: b.canonical, up: health.status(b) !== "down" })));
  const accessWatch = new AccessWatch(sessions, (keyIds) => withdrawnKeys(database, keyIds), config.sessionLimits.accessCheckIntervalMs, log);
  const keys = new KeyView(database, config.sessionLimits.accessCheckIntervalMs);
  keys.start();
  const ledger = new Ledger(database, config.holdTtlMs);
  const meter = new Meter(ledger, log);
  // Budgets' spend, read again as often as the funds (docs/limits.md#budgets).
  const spend = new SpendView(database);
  spend.start(config.sessionLimits.accessCheckIntervalMs);
  meter.capSpend(spend);
  const counting = config.limitCounters;
  const limits = new Limiter({ ...counting, redis: counting.redisUrl ? new RedisCounters(counting.redisUrl, counting.leaseTtlMs) : undefined, log });
  feedMetrics(metrics, { meter, ledger, pools: { tts_engines: pool, stt_audio: audioPool, files }, limits });
  await limits.start();
  // Keeps this process's holds and checkpoints current; settles lapsed holds of dead processes.
  ledger.holds.start(log);
  // Other processes' spending and top-ups reach the funds view as often as withdrawn keys do.
  ledger.funds.start(config.sessionLimits.accessCheckIntervalMs);
  const mailer = config.smtpUrl ? smtpMailer(config.smtpUrl, config.mailFrom) : devOutbox(config.devOutboxDir, config.mailFrom, log);
  const localProviders = catalogue.providers.filter((p) => p.kind === "local").map((p) => p.id);
  const welcome = welcomeFromConfig(config.welcomeGrantUsd, config.welcomeGrantDays, localProviders);
  const signup = new Signup({ database, ledger, mailer, log, welcome, tenantLimits: config.defaultTenantLimits });
  // The public address is known once listening (PORT=0 picks one); links are made later, per request.
  let publicUrl = config.publicUrl ?? "";
  const payments = config.stripe
    ? new StripePayments({ ...config.stripe, returnUrl: `${config.publicUrl ?? `${config.tls ? "https" : "http"}://localhost:${config.port}`}/account/top-up-return` })
    : config.sandboxPayments
      ? new SandboxPayments(() => publicUrl)
      : undefined;
  const topUps = new TopUps(database, ledger, payments, log);
  let accepting = true;
  const voicePreviews = new VoicePreviews(catalogue, providers, log, PREVIEW_TIMEOUT_MS);
  const voices = new VoiceCatalogue(
    { catalogue, providers, log, previews: voicePreviews, metrics: new VoiceMetrics(database, log, config.voices.metricsRefreshMs), sightings: new VoiceSightings(database, log) },
    config.voices,
  );
  const customVoices = new CustomVoices(database, catalogue, (id) => providers.get(id), ledger, log, config.customVoices);
  await customVoices.start();
  // Tenants' cloned voices are theirs: searched with their key, left out of everyone's catalogue.
  voices.setOwnVoices(async (tenantId) => ownVoiceEntries(catalogue, await customVoices.list(tenantId)));
  voices.hideVoices((id) => customVoices.routeOf(id) !== undefined);
  // Built in the background: requests that come before it is ready wait for the first build.
  voices.start();
  const profiles = new RealtimeProfiles(database);
  const clientSecrets = new ClientSecrets(database);
  const ctx: AppContext = {
    config,
    log,
    metrics,
    health,
    ttsCache: new TtsCache(config.ttsCache, metrics),
    database,
    keys,
    catalogue,
    voices,
    voicePreviews,
    providers,
    sessions,
    meter,
    spend,
    signup,
    topUps,
    payments,
    profiles,
    clientSecrets,
    phoneLinks: new PhoneLinks(database),
    customVoices,
    pronunciation: new PronunciationDictionaries(database),
    sttProviders,
    files,
    vadLanes: audioPool,
    limits,
    accepting: () => accepting,
  };

  const release = async () => {
    customVoices.stop();
    await voices.stop();
    await accessWatch.stop();
    await keys.stop();
    await ledger.holds.stop();
    ledger.funds.stop();
    spend.stop();
    await pool.close();
    await audioPool.close();
    await files.close();
    limits.stop();
    await database.close();
    await stopTracing?.();
  };

  let listener: Listener;
  try {
    await checkVoiceAliases(catalogue, providers);
    const app = createApp(ctx);
    // Elysia asks Bun for SO_REUSEPORT by default, with which a second server on a taken port
    // starts and silently takes a share of the traffic. Bun's own body cap answers 413 with no
    // body: bodies are capped per route instead, in the surface's envelope (surfaces/request-body.ts).
    const listen: Listen = (port, tls) => {
      app.listen({ port, hostname: config.host, reusePort: config.reusePort, maxRequestBodySize: Number.MAX_SAFE_INTEGER, ...(tls ? { tls } : {}) });
      return app.server!;
    };
    listener = new Listener(listen, config.port, config.tls);
  } catch (err) {
    await release();
    if ((err as { code?: string }).code !== "EADDRINUSE") throw err;
    throw new PortTakenError(`port ${config.port} on ${config.host} is already in use by another process: stop it, choose another PORT, or set REUSE_PORT=true to share the port on purpose`);
  }
  const { server } = listener;
  const url = `${listener.scheme}://${config.host === "0.0.0.0" ? "127.0.0.1" : config.host}:${server.port}`;
  publicUrl = config.publicUrl ?? url;
  // What it is bound to, as bound: 0.0.0.0 (every interface) is said as such, not as the loopback address `url` connects to.
  log.info(
    { host: server.hostname, port: server.port, tls: listener.scheme === "https", database: database.dialect, providers: catalogue.providers.map((p) => p.id), reusePort: config.reusePort },
    "voxroute listening",
  );

  return {
    url,
    ctx,
    reloadTls() {
      try {
        if (listener.reloadTls()) log.info({ certFile: config.tls?.certFile, keyFile: config.tls?.keyFile }, "TLS certificate reloaded: new connections get it");
        else log.info("SIGHUP: no TLS_CERT_FILE / TLS_KEY_FILE to reload");
      } catch (err) {
        log.error({ err: (err as Error).message }, "TLS certificate not reloaded: the one already loaded goes on serving");
      }
    },
    async stop(graceMs = config.shutdownGraceMs) {
      accepting = false;
      log.info({ sessions: sessions.size, graceMs }, "shutting down: new requests answered 503 while open sessions finish");
      await sessions.drain(graceMs);
      listener.stop();
      await release();
      log.info("shut down");
    },
  };
}
