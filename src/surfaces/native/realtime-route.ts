import type { ServerWebSocket } from "bun";
import { Elysia } from "elysia";
import { authenticate } from "../../accounts/keys.ts";
import type { Binding } from "../../catalogue/types.ts";
import type { AppContext } from "../../context.ts";
import { ApiError, closeReason, ERRORS } from "../../errors.ts";
import type { Payer } from "../../ledger/meter.ts";
import { AppSocket } from "../../realtime/app-socket.ts";
import type { RealtimeProfile } from "../../realtime/profiles.ts";
import { candidatesForVoice } from "../../routing/voices.ts";
import type { Admission } from "../../sessions/admission.ts";
import { Conversation } from "../../sessions/realtime/conversation.ts";
import { SttSession } from "../../sessions/stt-session.ts";
import { TtsSession } from "../../sessions/tts-session.ts";
import { nativeError } from "../error-responses.ts";
import { jsonOf, takeFrames } from "../raw-frames.ts";
import { type ConversationPlan, planConversation } from "../realtime-plan.ts";
import { WsConnections } from "../ws-connections.ts";
import { WsPort } from "../ws-port.ts";
import { nativeKey } from "./auth.ts";
import { nativeRealtimePort } from "./realtime-wire.ts";

// `/v1/realtime`: a realtime profile run as a live conversation (docs/realtime.md). The socket is
// opened with a single-use `client_secret`, or with `profile_id` and a Bearer key. What can be
// answered as HTTP is answered before the upgrade (400 query, 404 profile, 402 balance); a bad
// credential closes 4401/4403 after it, as on the other channels.

/** Who pays, what runs, and who may serve it: worked out once per handshake. */
interface Handshake {
  /** Answered as HTTP before the upgrade. */
  refusal?: ApiError;
  /** Told as a close after the upgrade (credentials). */
  closeWith?: ApiError;
  payer?: Payer;
  profile?: RealtimeProfile;
  plan?: ConversationPlan;
  stt?: Binding[];
  tts?: Binding[];
}

async function handshakeOf(ctx: AppContext, request: Request): Promise<Handshake> {
  const query = new URL(request.url).searchParams;
  const secret = query.get("client_secret");
  let profileId = query.get("profile_id");
  if (!secret && !profileId) return { refusal: new ApiError("invalid_request", "open the socket with client_secret, or with profile_id and a Bearer key", { param: "profile_id" }) };
  let payer: Payer;
  try {
    if (secret) {
      const redeemed = await ctx.clientSecrets.redeem(secret);
      payer = { tenantId: redeemed.tenantId, keyId: redeemed.keyId };
      profileId = redeemed.profileId;
    } else payer = await authenticate(ctx.database, nativeKey(request));
  } catch (err) {
    if (err instanceof ApiError) return { closeWith: err };
    throw err;
  }
  try {
    const profile = await ctx.profiles.get(payer.tenantId, profileId!);
    const plan = planConversation(ctx.catalogue, (id) => ctx.sttProviders.get(id), profile.pipeline);
    const stt = await ctx.meter.admit(payer, plan.stt.candidates);
    const tts = await ctx.meter.admit(payer, await candidatesForVoice(plan.tts.candidates, plan.tts.voice, (id) => ctx.providers.get(id)));
    return { payer, profile, plan, stt, tts };
  } catch (err) {
    if (err instanceof ApiError) return { refusal: err };
    throw err;
  }
}

/** A session's admission on an account already checked: its own meter (and activity record) under the conversation's id. */
function admitUnder(ctx: AppContext, id: string, payer: Payer, candidates: Binding[], recheck: boolean): () => Promise<Admission> {
  return async () => {
    const affordable = recheck ? await ctx.meter.admit(payer, candidates) : candidates;
    const meter = ctx.meter.start(id, payer, "native");
    meter.prefetch(affordable[0]!);
    return { candidates: affordable, meter };
  };
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

function startConversation(ctx: AppContext, id: string, h: Required<Omit<Handshake, "refusal" | "closeWith">>, port: WsPort): Conversation {
  const { plan, payer, profile } = h;
  const limits = ctx.config.sessionLimits;
  /** What answers are spoken with; a `language` message may change it. */
  let speech = { voice: plan.tts.voice, candidates: h.tts };
  let hearings = 0;
  const common = { log: ctx.log, metrics: ctx.metrics, connectTimeoutMs: ctx.config.providerConnectTimeoutMs, surface: "native" };
  return new Conversation(
    {
      id,
      profileId: profile.id,
      input: { audioFormat: plan.stt.audioFormat, sampleRate: plan.stt.sampleRate },
      output: plan.output,
      greeting: plan.greeting,
      partialPrompts: plan.partialPrompts,
      language: plan.stt.language,
      // A language switch plans the recognizer anew, as the profile with that language would.
      openStt: (sttPort, language) => {
        const stt = language ? planConversation(ctx.catalogue, (pid) => ctx.sttProviders.get(pid), withLanguage(profile.pipeline, language)).stt : plan.stt;
        const sttId = ++hearings === 1 ? `${id}.stt` : `${id}.stt_${hearings}`;
        const session = new SttSession(
          { ...stt, id: sttId, admit: admitUnder(ctx, sttId, payer, language ? stt.candidates : h.stt, language !== undefined), idleTimeoutMs: limits.sttIdleTimeoutMs },
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
            sampleRate: plan.output.sampleRate,
            autoFlush: true,
            options: plan.tts.options,
            admit: admitUnder(ctx, ttsId, payer, speech.candidates, true),
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
    },
    { port: nativeRealtimePort(port, id), log: ctx.log },
  );
}

function withLanguage(pipeline: RealtimeProfile["pipeline"], language: string): RealtimeProfile["pipeline"] {
  return { ...pipeline, stt: { ...pipeline.stt, input: { ...pipeline.stt.input, language } } };
}

const FRAME_RULE = "text frames are JSON objects with type realtime.input_audio.commit or realtime.session.close";

/** A client frame: binary audio, or one of the two commands. False when the frame breaks the contract. */
function deliver(conversation: Conversation, frame: string | Uint8Array): boolean {
  if (typeof frame !== "string") {
    conversation.audio(frame);
    return true;
  }
  const type = (jsonOf(frame) as { type?: unknown } | null | undefined)?.type;
  if (type === "realtime.input_audio.commit") conversation.commit();
  else if (type === "realtime.session.close") conversation.close();
  else return false;
  return true;
}

interface Connection {
  port: WsPort;
  conversation?: Conversation;
  gone: boolean;
}

export function realtimeRoute(ctx: AppContext) {
  const connections = new WsConnections<Connection>();
  const handshakes = new WeakMap<Request, Promise<Handshake>>();
  const handshake = (request: Request) => {
    let h = handshakes.get(request);
    if (!h) handshakes.set(request, (h = handshakeOf(ctx, request)));
    return h;
  };

  return new Elysia()
    .get("/v1/realtime", () => nativeError(new ApiError("websocket_upgrade_required", "connect with a WebSocket upgrade")))
    .ws("/v1/realtime", {
      // Runs before the upgrade, possibly twice: the handshake's work is done once.
      beforeHandle: async ({ request }) => {
        const { refusal } = await handshake(request);
        if (refusal) return nativeError(refusal);
      },
      open(ws) {
        const raw = ws.raw as ServerWebSocket<unknown>;
        const conn: Connection = { port: new WsPort(raw), gone: false };
        connections.set(ws, conn);
        const id = `rt_${crypto.randomUUID().replaceAll("-", "")}`;
        // Audio sent before the conversation exists is kept, then delivered in order.
        const early: (string | Uint8Array)[] = [];
        const reject = () => {
          conn.port.sendEvent({ type: "realtime.error", code: "invalid_realtime_frame", message: FRAME_RULE });
          conn.conversation?.abort();
          conn.port.close(ERRORS.invalid_realtime_frame.close, closeReason("invalid_realtime_frame"));
        };
        takeFrames(raw, (frame) => {
          if (!conn.conversation) return void early.push(frame);
          if (!deliver(conn.conversation, frame)) reject();
        });
        void handshake(ws.data.request).then((h) => {
          if (conn.gone) return;
          if (h.closeWith) return conn.port.close(h.closeWith.closeCode, closeReason(h.closeWith.code));
          conn.conversation = startConversation(ctx, id, h as Parameters<typeof startConversation>[2], conn.port);
          for (const frame of early.splice(0)) if (!deliver(conn.conversation, frame)) return reject();
        });
      },
      drain(ws) {
        connections.get(ws)?.port.drain();
      },
      close(ws) {
        const conn = connections.take(ws);
        if (!conn) return;
        conn.gone = true;
        conn.conversation?.abort();
        conn.port.drain();
      },
    });
}
