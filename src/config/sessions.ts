import { type Env, flag, integer } from "./env.ts";

// When sessions end: the native sockets' idle limits and init deadline, the check for withdrawn
// access, and realtime conversations' timeouts.

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

export interface RealtimeConfig {
  /** Whether an application socket may reach loopback, private and other non-public addresses. */
  allowPrivateUpstreams: boolean;
  /** How long an application may take to start answering a finished prompt before the conversation ends (0: no limit). */
  appReplyTimeoutMs: number;
  /** How often an application speaking a protocol with pings (ElevenLabs' Speech Engine) is pinged; one unanswered by the next is gone (0: never). */
  appPingIntervalMs: number;
  /** How long an answer the application leaves without `last: true` may go without a token before it is finished. */
  answerQuietMs: number;
  /** A conversation ends after this long with nothing from the caller or the application and no answer made or sent (0: never). */
  idleTimeoutMs: number;
}

export function sessionLimits(env: Env): SessionLimits {
  return {
    ttsIdleTimeoutMs: integer(env, "TTS_IDLE_TIMEOUT_MS", 20_000),
    sttIdleTimeoutMs: integer(env, "STT_IDLE_TIMEOUT_MS", 10_000),
    elInitTimeoutMs: integer(env, "EL_INIT_TIMEOUT_MS", 5_000, 1),
    elUnauthenticatedPerAddress: integer(env, "EL_UNAUTHENTICATED_PER_ADDRESS", 20, 1),
    accessCheckIntervalMs: integer(env, "ACCESS_CHECK_INTERVAL_MS", 2_000, 100),
  };
}

export function realtime(env: Env): RealtimeConfig {
  return {
    allowPrivateUpstreams: flag(env, "REALTIME_ALLOW_PRIVATE_UPSTREAMS"),
    appReplyTimeoutMs: integer(env, "REALTIME_APP_REPLY_TIMEOUT_MS", 15_000, 0),
    appPingIntervalMs: integer(env, "REALTIME_APP_PING_INTERVAL_MS", 20_000, 0),
    answerQuietMs: integer(env, "REALTIME_ANSWER_QUIET_MS", 5_000, 1),
    idleTimeoutMs: integer(env, "REALTIME_IDLE_TIMEOUT_MS", 300_000, 0),
  };
}
