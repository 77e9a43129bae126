import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { aliasesOfJson, mergeAliases, modelAliasesOfText, type OperatorAliases, voiceAliasesOfText } from "./catalogue/operator-aliases.ts";
import type { LogLevel } from "./log.ts";
import { type TracingSettings, tracingSettings } from "./tracing/settings.ts";
import type { EnvReader } from "./providers/home.ts";
import { readProviderSettings, type ProviderSettings } from "./providers/all.ts";

// One typed configuration object, read from environment variables (documented in README.md).

export type { LogLevel };

export interface Config {
  port: number;
  host: string;
  /** Share the port with other processes (SO_REUSEPORT); otherwise a taken port stops the start. */
  reusePort: boolean;
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
  localStt: { perWorker: number; queue: number; waitMs: number };
  /** Bound on how long a network provider may take to accept a session before the next candidate is tried (embedded engines queue instead). */
  providerConnectTimeoutMs: number;
  /** When a binding's circuit opens and for how long (docs/routing.md#provider-health). */
  providerHealth: { failureThreshold: number; cooldownMs: number; cooldownMaxMs: number };
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
  defaultTenantLimits: { max_sessions?: number; requests_per_minute?: number; usd_per_day?: number; usd_per_month?: number };
  /** Promotional credits for a new signup, limited to the embedded engines. */
  welcomeGrantUsd: string;
  welcomeGrantDays: number;
  /** This server's address as payers' browsers reach it (checkout return and sandbox pages). */
  publicUrl?: string;
  stripe?: { secretKey: string; webhookSecret: string; apiUrl?: string };
  /** A local checkout page that completes payments without money: demos and the embedded default only. */
  sandboxPayments: boolean;
  /** Realtime conversations: whether an application socket may reach loopback, private and other non-public addresses. */
  realtime: {
    allowPrivateUpstreams: boolean;
    /** How long an application may take to start answering a finished prompt before the conversation ends (0: no limit). */
    appReplyTimeoutMs: number;
    /** How often an application speaking a protocol with pings (ElevenLabs' Speech Engine) is pinged; one unanswered by the next is gone (0: never). */
    appPingIntervalMs: number;
    /** How long an answer the application leaves without `last: true` may go without a token before it is finished. */
    answerQuietMs: number;
    /** A conversation ends after this long with nothing from the caller or the application and no answer made or sent (0: never). */
    idleTimeoutMs: number;
  };
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

export interface LimitCountersConfig {
  /** redis:// or rediss:// URL of the counters shared by every instance; unset: each instance counts its own. */
  redisUrl?: string;
  /** A session's lease lapses this long after its last refresh (refreshed every third of it): a killed instance's sessions stop counting by then. */
  leaseTtlMs: number;
  /** How long an admission waits for Redis before counting on this instance alone. */
  redisTimeoutMs: number;
  /** With Redis not answering, refuse requests that have limits (503) instead of counting per instance. */
  failClosed: boolean;
}

export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface SessionLimits {
  /** `/v1/tts` closes after this long with no client frame and nothing sent to the client; 0 = never. */
  ttsIdleTimeoutMs: number;
  /** `/v1/stt` likewise (audio, commands, empty keep-alive frames and events sent all count); 0 = never. */
  sttIdleTimeoutMs: number;
  /** An `/el` stream-input socket without a valid key in its handshake must send its init frame within this. */
  elInitTimeoutMs: number;
  /** How many such sockets one client address may have waiting for their init frame; beyond it, 429. */
  elUnauthenticatedPerAddress: number;
  /** How often open sessions' keys and tenants are checked for revocation or disabling. */
  accessCheckIntervalMs: number;
}

export interface TtsCacheConfig {
  /** `TTS_CACHE_BYTES`: bytes of utterances kept in memory; 0 turns the cache off. */
  bytes: number;
  /** `TTS_CACHE_DIR`: a directory whose entries outlive a restart (none: memory only). */
  dir?: string;
  /** `TTS_CACHE_DIR_BYTES`: the most the directory holds. */
  dirBytes: number;
  /** `TTS_CACHE_SCOPE`: `tenant` (a tenant hits only its own entries) or `shared`. */
  scope: "tenant" | "shared";
  /** `TTS_CACHE_PROVIDERS`: `all`, or the ids of the providers whose audio may be kept. */
  providers: "all" | string[];
  /** `TTS_CACHE_PRICE_FACTOR`: a hit's characters cost the model's price times this (a decimal). */
  priceFactor: string;
}

export interface VoiceCatalogueConfig {
  /** How often every provider's voice list is asked for again. */
  refreshMs: number;
  /** How soon a provider whose list could not be had is asked again. */
  retryMs: number;
  /** Longest a provider may take to give its list. */
  listTimeoutMs: number;
  /** How often the voices' metrics are read again from the activity records. */
  metricsRefreshMs: number;
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS: LogLevel[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

function integer(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`config: ${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

/** The schemes Bun's Redis client takes; anything else (a bare host:port, http://) would fail the start deep in the client or count alone forever. */
const REDIS_SCHEMES = ["redis:", "rediss:", "valkey:", "valkeys:", "redis+tls:", "redis+unix:", "redis+tls+unix:"];

function redisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL;
  if (!raw) return undefined;
  if (!REDIS_SCHEMES.includes(URL.parse(raw)?.protocol ?? "")) throw new Error(`config: REDIS_URL must be a redis:// or rediss:// URL, got "${raw}"`);
  return raw;
}

function decimal(env: Env, name: string, fallback: string): string {
  const raw = env[name] ?? fallback;
  if (!/^\d+(\.\d{1,6})?$/.test(raw)) throw new Error(`config: ${name} must be a USD amount with at most 6 decimals, got "${raw}"`);
  return raw;
}

function flag(env: Env, name: string): boolean {
  return ["1", "true", "yes", "on"].includes((env[name] ?? "").toLowerCase());
}

/** TRUST_PROXY_HOPS when set; else TRUST_PROXY=true means one proxy. */
function trustProxyHops(env: Env): number {
  if (env.TRUST_PROXY_HOPS) return integer(env, "TRUST_PROXY_HOPS", 0);
  return flag(env, "TRUST_PROXY") ? 1 : 0;
}

/** The environment as providers read it: the same rules and messages as the settings above. */
function envReader(env: Env): EnvReader {
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

function sessionLimits(env: Env): SessionLimits {
  return {
    ttsIdleTimeoutMs: integer(env, "TTS_IDLE_TIMEOUT_MS", 20_000),
    sttIdleTimeoutMs: integer(env, "STT_IDLE_TIMEOUT_MS", 10_000),
    elInitTimeoutMs: integer(env, "EL_INIT_TIMEOUT_MS", 5_000, 1),
    elUnauthenticatedPerAddress: integer(env, "EL_UNAUTHENTICATED_PER_ADDRESS", 20, 1),
    accessCheckIntervalMs: integer(env, "ACCESS_CHECK_INTERVAL_MS", 2_000, 100),
  };
}

function ttsCache(env: Env): TtsCacheConfig {
  const scope = env.TTS_CACHE_SCOPE || "tenant";
  if (scope !== "tenant" && scope !== "shared") throw new Error(`config: TTS_CACHE_SCOPE must be tenant or shared, got "${scope}"`);
  const providers = envReader(env).list("TTS_CACHE_PROVIDERS");
  const priceFactor = env.TTS_CACHE_PRICE_FACTOR || "1";
  if (!/^\d+(\.\d{1,6})?$/.test(priceFactor)) throw new Error(`config: TTS_CACHE_PRICE_FACTOR must be a decimal >= 0 with at most 6 decimals, got "${priceFactor}"`);
  return {
    bytes: integer(env, "TTS_CACHE_BYTES", 64 * 1024 * 1024),
    dir: env.TTS_CACHE_DIR || undefined,
    dirBytes: integer(env, "TTS_CACHE_DIR_BYTES", 1024 * 1024 * 1024, 1),
    scope,
    providers: providers.length === 0 || providers.includes("all") ? "all" : providers,
    priceFactor,
  };
}

function defaultTenantLimits(env: Env): Config["defaultTenantLimits"] {
  const set = (name: string) => env[name] !== undefined && env[name] !== "";
  return {
    ...(set("DEFAULT_TENANT_MAX_SESSIONS") ? { max_sessions: integer(env, "DEFAULT_TENANT_MAX_SESSIONS", 0) } : {}),
    ...(set("DEFAULT_TENANT_REQUESTS_PER_MINUTE") ? { requests_per_minute: integer(env, "DEFAULT_TENANT_REQUESTS_PER_MINUTE", 0) } : {}),
    ...(set("DEFAULT_TENANT_USD_PER_DAY") ? { usd_per_day: Number(decimal(env, "DEFAULT_TENANT_USD_PER_DAY", "0")) } : {}),
    ...(set("DEFAULT_TENANT_USD_PER_MONTH") ? { usd_per_month: Number(decimal(env, "DEFAULT_TENANT_USD_PER_MONTH", "0")) } : {}),
  };
}

function voices(env: Env): VoiceCatalogueConfig {
  return {
    refreshMs: integer(env, "VOICE_CATALOGUE_REFRESH_MS", 600_000, 100),
    retryMs: integer(env, "VOICE_CATALOGUE_RETRY_MS", 60_000, 100),
    listTimeoutMs: integer(env, "VOICE_LIST_TIMEOUT_MS", 30_000, 1),
    metricsRefreshMs: integer(env, "VOICE_METRICS_REFRESH_MS", 300_000, 100),
  };
}

function providerHealth(env: Env): Config["providerHealth"] {
  const cooldownMs = integer(env, "PROVIDER_COOLDOWN_MS", 5_000, 1);
  const cooldownMaxMs = integer(env, "PROVIDER_COOLDOWN_MAX_MS", 60_000, 1);
  if (cooldownMaxMs < cooldownMs) throw new Error(`config: PROVIDER_COOLDOWN_MAX_MS (${cooldownMaxMs}) must be at least PROVIDER_COOLDOWN_MS (${cooldownMs})`);
  return { failureThreshold: integer(env, "PROVIDER_FAILURE_THRESHOLD", 3), cooldownMs, cooldownMaxMs };
}

function stripe(env: Env): Config["stripe"] {
  if (!env.STRIPE_SECRET_KEY) return undefined;
  if (!env.STRIPE_WEBHOOK_SECRET) throw new Error("config: STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY");
  return { secretKey: env.STRIPE_SECRET_KEY, webhookSecret: env.STRIPE_WEBHOOK_SECRET, apiUrl: env.STRIPE_API_URL || undefined };
}

function localStt(env: Env, audioWorkers: number): Config["localStt"] {
  // Three per worker: 6 decoders (~560 MiB) and ~1.1 cores of real-time decoding on two workers,
  // which leaves room for everything else within 1.5 GiB and two cores.
  const perWorker = integer(env, "LOCAL_STT_DECODERS_PER_WORKER", 3, 1);
  return { perWorker, queue: integer(env, "LOCAL_STT_QUEUE", perWorker * audioWorkers), waitMs: integer(env, "LOCAL_STT_QUEUE_WAIT_MS", 2000) };
}

/** MODEL_ALIASES, VOICE_ALIASES and ALIASES_FILE together; whether each reaches a served model is the catalogue's check. */
function aliases(env: Env): OperatorAliases {
  const file = env.ALIASES_FILE;
  let fromFile: OperatorAliases = { models: [], voices: [] };
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new Error(`config: ALIASES_FILE ${file} cannot be read: ${(err as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new Error(`config: ALIASES_FILE ${file} is not JSON: ${(err as Error).message}`);
    }
    fromFile = aliasesOfJson(json, `ALIASES_FILE ${file}`);
  }
  return mergeAliases({ models: modelAliasesOfText(env.MODEL_ALIASES), voices: voiceAliasesOfText(env.VOICE_ALIASES) }, fromFile);
}

function tls(env: Env): TlsFiles | undefined {
  const certFile = env.TLS_CERT_FILE || undefined;
  const keyFile = env.TLS_KEY_FILE || undefined;
  if (!certFile && !keyFile) return undefined;
  if (!certFile || !keyFile) throw new Error("config: TLS_CERT_FILE and TLS_KEY_FILE go together: set both (PEM files) or neither");
  return { certFile, keyFile };
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
    realtime: {
      allowPrivateUpstreams: flag(env, "REALTIME_ALLOW_PRIVATE_UPSTREAMS"),
      appReplyTimeoutMs: integer(env, "REALTIME_APP_REPLY_TIMEOUT_MS", 15_000, 0),
      appPingIntervalMs: integer(env, "REALTIME_APP_PING_INTERVAL_MS", 20_000, 0),
      answerQuietMs: integer(env, "REALTIME_ANSWER_QUIET_MS", 5_000, 1),
      idleTimeoutMs: integer(env, "REALTIME_IDLE_TIMEOUT_MS", 300_000, 0),
    },
    customVoices: { pollMs: integer(env, "CUSTOM_VOICE_POLL_MS", 2_000, 10), refreshMs: integer(env, "CUSTOM_VOICE_REFRESH_MS", 10_000, 100) },
    voices: voices(env),
    aliases: aliases(env),
    tls: tls(env),
    tracing: tracingSettings(env),
    providers: readProviderSettings(envReader(env)),
    limitCounters: {
      redisUrl: redisUrl(env),
      leaseTtlMs: integer(env, "LIMITS_LEASE_TTL_MS", 30_000, 300),
      redisTimeoutMs: integer(env, "LIMITS_REDIS_TIMEOUT_MS", 250, 1),
      failClosed: flag(env, "LIMITS_FAIL_CLOSED"),
    },
  };
}
