import { keySha256 } from "../accounts/keys.ts";
import type { Database } from "../db/open.ts";
import { type AppSetup, conversationRelayWire } from "./app-messages.ts";
import { type AppSignal, AppSocket, AppUnavailable } from "./app-socket.ts";
import type { Pipeline } from "./profiles.ts";
import { SPEECH_ENGINE_AUTH_HEADER, speechEngineAuthorization } from "./speech-engine-jwt.ts";
import { SpeechEngineWire } from "./speech-engine-wire.ts";

// The application socket of a conversation, in the profile's protocol: ConversationRelay, or
// ElevenLabs' Speech Engine, whose connection carries a token signed with the creating key's hash.

export interface ApplicationContext {
  config: { providerConnectTimeoutMs: number; realtime: { allowPrivateUpstreams: boolean; appReplyTimeoutMs: number; appPingIntervalMs: number } };
  database: Database;
}

export async function openApplication(ctx: ApplicationContext, upstream: Pipeline["upstream"], setup: AppSetup, onSignal: (signal: AppSignal) => void): Promise<AppSocket> {
  const options = {
    allowPrivate: ctx.config.realtime.allowPrivateUpstreams,
    connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
    replyTimeoutMs: ctx.config.realtime.appReplyTimeoutMs,
    pingIntervalMs: ctx.config.realtime.appPingIntervalMs,
  };
  if (upstream.protocol !== "speech_engine") return AppSocket.open(upstream, conversationRelayWire(setup), options, onSignal);
  const secret = upstream.signing_key_id ? await keySha256(ctx.database, upstream.signing_key_id) : undefined;
  if (!secret) throw new AppUnavailable("the Speech Engine's token cannot be signed: the key that created it is unknown");
  const headers = { ...upstream.headers, [SPEECH_ENGINE_AUTH_HEADER]: speechEngineAuthorization(secret) };
  return AppSocket.open({ url: upstream.url, headers }, new SpeechEngineWire(setup), options, onSignal);
}
