import type { ServerWebSocket } from "bun";
import { authenticate } from "../accounts/keys.ts";
import type { Binding } from "../catalogue/types.ts";
import type { AppContext } from "../context.ts";
import { ApiError } from "../errors.ts";
import type { Payer } from "../ledger/meter.ts";
import { planVoice, type Voiced } from "../planning/plan-voice.ts";
import { AppSocket } from "../realtime/app-socket.ts";
import type { RealtimeProfile } from "../realtime/profiles.ts";
import { Conversation } from "../sessions/realtime/conversation.ts";
import type { HearingSettings } from "../sessions/realtime/hearing.ts";
import type { OutputFormat } from "../realtime/output-formats.ts";
import type { ConversationPort } from "../sessions/realtime/conversation-events.ts";
import { SttSession } from "../sessions/stt-session.ts";
import { TtsSession } from "../sessions/tts-session.ts";
import { type ConversationPlan, planConversation } from "./realtime-plan.ts";
import { admitSocket, meteredSession, type SocketAdmission } from "./ws-admission.ts";
import { WsConnections } from "./ws-connections.ts";
import { WsPort } from "./ws-port.ts";

// What every realtime surface (`/v1/realtime`, `/el` conversations, `/oai/realtime`) does around
// its framing: the handshake's admission (credential, profile, plan, balance; ws-admission.ts) and
// the conversation's sessions built from the context. What can be answered as HTTP is answered
// before the upgrade (400 plan, 404 profile, 402 balance); a bad credential closes 4401/4403 after it.

/**
 * How a socket says what it opens: a single-use secret (it names what it opens), or a profile and
 * a key. With `transcription` (only `/oai` asks it) a key alone, or a secret minted for it, opens
 * a transcription session instead of a profile.
 */
export interface Opening {
  secret?: string | null;
  profileId?: string | null;
  key?: string;
  transcription?: boolean;
}

/** Who pays for a realtime socket, and what it opens: a profile, or (none) a transcription session with the settings a secret was minted with. */
interface RealtimePayer extends Payer {
  profileId?: string | null;
  session?: Record<string, unknown>;
}

/** The profile a realtime socket runs, and its plan. */
interface ProfilePlan {
  profile: RealtimeProfile;
  conversation: ConversationPlan;
}

export type RealtimeAdmission = SocketAdmission<ProfilePlan, RealtimePayer>;

/**
 * The credential: a secret is spent here. A secret that opens another profile than the one
 * named, or a transcription session where a profile must be named, is as invalid as an unknown one.
 */
async function payerOf(ctx: AppContext, { secret, profileId, key, transcription }: Opening): Promise<RealtimePayer> {
  if (!secret) return { ...(await authenticate(ctx.database, key)), profileId };
  const redeemed = await ctx.clientSecrets.redeem(secret);
  if (profileId && profileId !== redeemed.profileId) throw new ApiError("invalid_client_secret", "the client secret opens another profile");
  if (!redeemed.profileId && !transcription) throw new ApiError("invalid_client_secret", "the client secret opens a transcription session, not a profile");
  return { tenantId: redeemed.tenantId, keyId: redeemed.keyId, profileId: redeemed.profileId, ...(redeemed.session ? { session: redeemed.session } : {}) };
}

/** A realtime socket's admission: who pays, then the profile they named, its plan, and what they can pay for of it. */
export function admitRealtime(ctx: AppContext, opening: Opening): Promise<RealtimeAdmission> {
  return admitSocket(ctx, {
    credential: () => payerOf(ctx, opening),
    plan: async (payer) => {
      if (!payer?.profileId) return undefined;
      const profile = await ctx.profiles.get(payer.tenantId, payer.profileId);
      return { profile, conversation: planConversation(ctx.catalogue, (id) => ctx.sttProviders.get(id), profile.pipeline) };
    },
    wants: ({ conversation: { stt, tts } }) => [{ candidates: stt.candidates }, tts],
  });
}

/** What a conversation starts from: who pays, the profile and its plan, and the candidates the payer can pay for. */
export interface OpenedHandshake {
  payer: Payer;
  profile: RealtimeProfile;
  plan: ConversationPlan;
  stt: Binding[];
  tts: Binding[];
  /** `/oai`: the session settings the client secret was minted with. */
  session?: Record<string, unknown>;
}

/** The conversation of an admission that named a profile (its credential was not refused). */
export function openedConversation({ payer, plan, affordable: [stt, tts] }: RealtimeAdmission): OpenedHandshake {
  if (!payer || !plan || !stt || !tts) throw new Error("only an admitted profile opens a conversation");
  return { payer, profile: plan.profile, plan: plan.conversation, stt, tts, ...(payer.session ? { session: payer.session } : {}) };
}

/** Whether a voice's language (`de-DE`) is the one asked for (`de-DE`, `de`), ignoring case. */
function speaks(voiceLanguage: string, asked: string): boolean {
  const [v, a] = [voiceLanguage.toLowerCase(), asked.toLowerCase()];
  return v === a || v.split("-")[0] === a || a.split("-")[0] === v;
}

/** The first of the candidates' voices that speaks `language` (the current voice if it does), with the candidates of its provider. */
async function voiceFor(ctx: AppContext, candidates: Binding[], current: string | undefined, language: string): Promise<{ voice: string; candidates: Binding[] }> {
  for (const binding of candidates) {
    const voices = (await ctx.providers.get(binding.provider.id)?.voices()) ?? [];
    const speaking = voices.filter((v) => v.languages.some((l) => speaks(l, language)));
    const voice = speaking.find((v) => v.id === current) ?? speaking[0];
    if (voice) return { voice: voice.id, candidates: candidates.filter((b) => b.provider.id === binding.provider.id) };
  }
  throw new ApiError("invalid_request", `no voice of the profile's TTS model speaks ${language}`);
}

/** What a surface's client may change of its profile for one conversation (ElevenLabs' overrides). */
export interface ConversationOverrides {
  greeting?: string;
  voice?: string;
  /** The surface's own audio format (OpenAI's PCM is 24 kHz only). */
  output?: OutputFormat;
  /** The surface shows the caller's speech probability (ElevenLabs' `vad_score`): the router VAD tells it where it decides the turns. */
  vadScores?: boolean;
}

/** A conversation of the profile the handshake found, told to `port`; its sessions are metered on `surface`. */
export async function startConversation(ctx: AppContext, id: string, h: OpenedHandshake, port: ConversationPort, surface: string, overrides: ConversationOverrides = {}): Promise<Conversation> {
  const { plan, payer, profile } = h;
  /** What answers are spoken with; a `language` message (or the client's voice) may change it. */
  let speech: Voiced = { voice: plan.tts.voice, candidates: h.tts };
  if (overrides.voice) speech = await planVoice({ voice: overrides.voice, candidates: h.tts }, payer.tenantId, ctx);
  let hearings = 0;
  const output = overrides.output ?? plan.output;
  const common = { log: ctx.log, metrics: ctx.metrics, connectTimeoutMs: ctx.config.providerConnectTimeoutMs, surface };
  return new Conversation(
    {
      id,
      profileId: profile.id,
      input: { audioFormat: plan.stt.audioFormat, sampleRate: plan.stt.sampleRate },
      output,
      greeting: overrides.greeting ?? plan.greeting,
      partialPrompts: plan.partialPrompts,
      language: plan.stt.language,
      // Other settings plan the recognizer anew, as the profile with them would.
      openStt: (sttPort, settings) => {
        const replanned = settings.language !== undefined || settings.manualCommits !== undefined;
        const stt = replanned ? planConversation(ctx.catalogue, (pid) => ctx.sttProviders.get(pid), withHearing(profile.pipeline, settings)).stt : plan.stt;
        const sttId = ++hearings === 1 ? `${id}.stt` : `${id}.stt_${hearings}`;
        const session = new SttSession(
          {
            ...stt,
            id: sttId,
            admit: () => meteredSession(ctx, sttId, payer, replanned ? stt.candidates : h.stt, surface, replanned),
            // The conversation is idle only when nobody does anything (its own timeout), not when the caller sends no audio.
            idleTimeoutMs: 0,
            vadScores: overrides.vadScores,
          },
          { ...common, provider: (pid) => ctx.sttProviders.get(pid), port: sttPort, vadLanes: ctx.vadLanes },
        );
        ctx.sessions.add(session, "stt");
        return session;
      },
      // Each response is admitted anew: the balance may have run down since the conversation began.
      openTts: (responseId, ttsPort) => {
        const ttsId = `${id}.${responseId}`;
        const session = new TtsSession(
          {
            id: ttsId,
            voice: speech.voice,
            format: "pcm",
            sampleRate: output.sampleRate,
            autoFlush: true,
            speed: plan.tts.speed,
            options: plan.tts.options,
            admit: () => meteredSession(ctx, ttsId, payer, speech.candidates, surface, true),
          },
          { ...common, provider: (pid) => ctx.providers.get(pid), port: ttsPort },
        );
        ctx.sessions.add(session, "tts");
        return session;
      },
      speakIn: async (language) => {
        speech = await voiceFor(ctx, h.tts, speech.voice, language);
      },
      openApp: (onSignal) =>
        AppSocket.open(
          profile.pipeline.upstream,
          { sessionId: id, profileId: profile.id },
          { allowPrivate: ctx.config.realtime.allowPrivateUpstreams, connectTimeoutMs: ctx.config.providerConnectTimeoutMs, replyTimeoutMs: ctx.config.realtime.appReplyTimeoutMs },
          onSignal,
        ),
      answerQuietMs: ctx.config.realtime.answerQuietMs,
      idleTimeoutMs: ctx.config.realtime.idleTimeoutMs,
    },
    { port, log: ctx.log },
  );
}

function withHearing(pipeline: RealtimeProfile["pipeline"], { language, manualCommits }: HearingSettings): RealtimeProfile["pipeline"] {
  const input = { ...pipeline.stt.input };
  if (language !== undefined) input.language = language;
  if (manualCommits !== undefined) input.commit_strategy = manualCommits ? "manual" : "auto";
  return { ...pipeline, stt: { ...pipeline.stt, input } };
}

/** What a conversation route keeps per socket. */
export interface ConversationConnection {
  port: WsPort;
  conversation?: Conversation;
  /** The socket closed: a conversation still starting is abandoned when it arrives. */
  gone: boolean;
  /** What else the socket holds that its close must end (a converter, a transcription session). */
  onClose?: () => void;
}

/** The sockets of a conversation route, and Bun's `drain` and `close` for them. */
export class ConversationSockets extends WsConnections<ConversationConnection> {
  /** A socket that opened: its connection (kept until it closes) and its session id, `<idPrefix>_<32 hex>`. */
  readonly open = (ws: { raw: unknown }, idPrefix: string): { raw: ServerWebSocket<unknown>; conn: ConversationConnection; id: string } => {
    const raw = ws.raw as ServerWebSocket<unknown>;
    const conn: ConversationConnection = { port: new WsPort(raw), gone: false };
    this.set(ws, conn);
    return { raw, conn, id: `${idPrefix}_${crypto.randomUUID().replaceAll("-", "")}` };
  };

  readonly drain = (ws: { raw: unknown }) => this.get(ws)?.port.drain();

  readonly close = (ws: { raw: unknown }) => {
    const conn = this.take(ws);
    if (!conn) return;
    conn.gone = true;
    conn.conversation?.abort();
    conn.onClose?.();
    conn.port.drain();
  };
}
