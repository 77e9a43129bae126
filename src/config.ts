import { homedir } from "node:os";
import { join } from "node:path";
import type { OperatorAliases } from "./catalogue/operator-aliases.ts";
import { aliases, type VoiceCatalogueConfig, voices } from "./config/catalogue.ts";
import { decimal, type Env, envReader, flag, integer } from "./config/env.ts";
import { type DefaultTenantLimits, defaultTenantLimits, type LimitCountersConfig, limitCounters } from "./config/limits.ts";
import { httpStallTimeoutS, type TlsFiles, tls, trustProxyHops } from "./config/network.ts";
import { type RealtimeConfig, realtime, type SessionLimits, sessionLimits } from "./config/sessions.ts";
import { type TtsCacheConfig, ttsCache } from "./config/tts-cache.ts";
import { type LocalSttConfig, localStt, type ProviderHealthConfig, providerHealth } from "./config/upstreams.ts";
import type { LogLevel } from "./log.ts";
import { type TracingSettings, tracingSettings } from "./tracing/settings.ts";
import { readProviderSettings, type ProviderSettings } from "./providers/all.ts";

// One typed configuration object, read from environment variables (documented in README.md). The
// settings of each concern, and the rules every variable is read by, are in config/.

export type { LogLevel, TlsFiles };

export interface Config {
  port: number;
  host: string;
  /** Share the port with other processes (SO_REUSEPORT); otherwise a taken port stops the start. */
  reusePort: boolean;
  /** How long a client may read nothing of a streamed HTTP answer before it is given up (0: never). */
  httpStallTimeoutS: number;
  databaseUrl: string;
  /** Where the executable keeps what it must unpack to load (`$XDG_CACHE_HOME/voxroute`, else `~/.cache/voxroute`). */
  cacheDir: string;
  logLevel: LogLevel;
  shutdownGraceMs: number;
  /** Worker threads that run the embedded TTS engines. */
  ttsWorkers: number;
  /** Worker threads for router VAD and the local recognizer. */
  audioWorkers: number;
  /** Worker threads that measure uploaded files' durations and decode them for the local recognizer. */
  fileWorkers: number;
  /**
   * The local recognizer's capacity: PocketSphinx decoders per audio worker (~95 MiB each, kept
   * and reused), and how many sessions may wait for one, for how long, before they are refused.
   */
  localStt: LocalSttConfig;
  /** Bound on how long a network provider may take to accept a session before the next candidate is tried (embedded engines queue instead). */
  providerConnectTimeoutMs: number;
  /** When a binding's circuit opens and for how long (docs/routing.md#provider-health). */
  providerHealth: ProviderHealthConfig;
  /** Longest silence inside an upstream's response or stream before it is given up. */
  upstreamIdleTimeoutMs: number;
  /** A streaming recognizer's upstream socket that carried nothing for this long gets a keep-alive. */
  upstreamKeepAliveMs: number;
  /** A request's credit hold lapses this long after its last refresh; a crashed process's holds are then settled from their checkpoints. */
  holdTtlMs: number;
  /** smtp(s)://user:pass@host:port; unset = codes go to the log and the dev outbox. */
  smtpUrl?: string;
  mailFrom: string;
  devOutboxDir: string;
  /**
   * How many proxies of yours stand in front: the client address is the entry that many places
   * from the right of X-Forwarded-For (each proxy appends what it saw). 0: the socket's address.
   */
  trustProxyHops: number;
  /** Largest audio file body (multipart included) the transcription endpoints read. */
  maxAudioUploadBytes: number;
  /** Sessions that end when they should: idle limits, the init deadline of keyless sockets, and withdrawn access. */
  sessionLimits: SessionLimits;
  /** The router's TTS cache (docs/tts-cache.md). */
  ttsCache: TtsCacheConfig;
  /** Limits written into every new tenant's (DEFAULT_TENANT_*, docs/limits.md#setting-limits); an unset one is no limit. */
  defaultTenantLimits: DefaultTenantLimits;
  /** Promotional credits for a new signup, limited to the embedded engines. */
  welcomeGrantUsd: string;
  welcomeGrantDays: number;
  /** This server's address as payers' browsers reach it (checkout return and sandbox pages). */
  publicUrl?: string;
  stripe?: { secretKey: string; webhookSecret: string; apiUrl?: string };
  /** A local checkout page that completes payments without money: demos and the embedded default only. */
  sandboxPayments: boolean;
  /** Realtime conversations: what an application socket may reach, and when a conversation ends. */
  realtime: RealtimeConfig;
  /** Cloned voices (docs/voices.md#cloned-voices): how often a voice still processing is asked about, and the routing table read again. */
  customVoices: { pollMs: number; refreshMs: number };
  /** The voice catalogue (`GET /v1/voices`, docs/voices.md): how often it lists providers' voices and reads their metrics. */
  voices: VoiceCatalogueConfig;
  /** The operator's model and voice aliases (docs/catalogue.md#operator-aliases); none unless set. */
  aliases: OperatorAliases;
  /** PEM files that make the port serve https and wss (docs/operations.md#tls); read again on SIGHUP. */
  tls?: TlsFiles;
  /** OpenTelemetry traces over OTLP/HTTP; absent (tracing off) unless an OTLP endpoint is set. */
  tracing?: TracingSettings;
  /** Each provider's settings, read by its own declaration (`providers/<id>/index.ts`) through `envReader`. */
  providers: ProviderSettings;
  /** Where `max_sessions` and `requests_per_minute` are counted (docs/limits.md): this instance, or Redis for the fleet. */
  limitCounters: LimitCountersConfig;
}

const LOG_LEVELS: LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function stripe(env: Env): Config["stripe"] {
  if (!env.STRIPE_SECRET_KEY) return undefined;
  if (!env.STRIPE_WEBHOOK_SECRET) throw new Error("config: STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY");
  return { secretKey: env.STRIPE_SECRET_KEY, webhookSecret: env.STRIPE_WEBHOOK_SECRET, apiUrl: env.STRIPE_API_URL || undefined };
}

/** The configuration from `env`: the entry points (main.ts, cli.ts) pass the environment; nothing below them reads it. */
export function loadConfig(env: Env): Config {
  const logLevel = (env.LOG_LEVEL ?? "info").toLowerCase() as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new Error(`config: LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  }
  const audioWorkers = integer(env, "AUDIO_WORKERS", 2, 1);
  return {
    port: integer(env, "PORT", 8080),
    host: env.HOST || "0.0.0.0",
    reusePort: flag(env, "REUSE_PORT"),
    httpStallTimeoutS: httpStallTimeoutS(env),
    databaseUrl: env.DATABASE_URL || "sqlite://./data/voxroute.sqlite",
    logLevel,
    shutdownGraceMs: integer(env, "SHUTDOWN_GRACE_MS", 10_000),
    ttsWorkers: integer(env, "TTS_WORKERS", 2, 1),
    audioWorkers,
    fileWorkers: integer(env, "FILE_WORKERS", 1, 1),
    localStt: localStt(env, audioWorkers),
    providerConnectTimeoutMs: integer(env, "PROVIDER_CONNECT_TIMEOUT_MS", 5_000, 1),
    providerHealth: providerHealth(env),
    holdTtlMs: integer(env, "HOLD_TTL_MS", 60_000, 1000),
    upstreamIdleTimeoutMs: integer(env, "UPSTREAM_IDLE_TIMEOUT_MS", 10_000, 1),
    upstreamKeepAliveMs: integer(env, "UPSTREAM_KEEPALIVE_MS", 4_000, 100),
    smtpUrl: env.SMTP_URL || undefined,
    mailFrom: env.MAIL_FROM || "voxroute <no-reply@localhost>",
    devOutboxDir: env.DEV_OUTBOX_DIR || "./data/outbox",
    cacheDir: join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "voxroute"),
    trustProxyHops: trustProxyHops(env),
    maxAudioUploadBytes: integer(env, "MAX_AUDIO_UPLOAD_BYTES", 25 * 1024 * 1024, 1),
    sessionLimits: sessionLimits(env),
    ttsCache: ttsCache(env),
    defaultTenantLimits: defaultTenantLimits(env),
    welcomeGrantUsd: decimal(env, "WELCOME_GRANT_USD", "1"),
    welcomeGrantDays: integer(env, "WELCOME_GRANT_DAYS", 30, 1),
    publicUrl: env.PUBLIC_URL?.replace(/\/+$/, "") || undefined,
    stripe: stripe(env),
    sandboxPayments: flag(env, "SANDBOX_PAYMENTS"),
    realtime: realtime(env),
    customVoices: { pollMs: integer(env, "CUSTOM_VOICE_POLL_MS", 2_000, 10), refreshMs: integer(env, "CUSTOM_VOICE_REFRESH_MS", 10_000, 100) },
    voices: voices(env),
    aliases: aliases(env),
    tls: tls(env),
    tracing: tracingSettings(env),
    providers: readProviderSettings(envReader(env)),
    limitCounters: limitCounters(env),
  };
}
