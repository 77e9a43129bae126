import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError, CLOSE, closeReason } from "../../errors.ts";
import type { Conversation } from "../../realtime/conversation/conversation.ts";
import { jsonOf } from "../raw-frames.ts";
import type { SocketRoute } from "../socket-routes.ts";
import { type ConversationOverrides, startConversation } from "../../realtime/start-conversation.ts";
import { admitRealtime, type ConversationSocket, conversationSocket, openConversation, openedConversation } from "../realtime-conversations.ts";
import { elAuth, elevenLabsKey } from "./auth.ts";
import { elConversationPort } from "./conversation-port.ts";
import { isObject } from "../../util/is-object.ts";
import { publicBase } from "../public-base.ts";

// ElevenLabs' conversation socket (`/el/v1/convai/conversation`) onto a realtime conversation of a
// Speech Engine (a profile), and the signed URLs that open it from a browser (docs/compat-el.md).

/** How long a signed URL may wait to be used: ElevenLabs' 15 minutes. */
export const SIGNED_URL_SECONDS = 15 * 60;
/** A client that sends no `conversation_initiation_client_data` first gets the engine as it is after this. */
const INIT_WAIT_MS = 2000;

/** What of `conversation_initiation_client_data` a conversation honours: the first message and the voice. */
function overridesOf(frame: Record<string, unknown>): ConversationOverrides {
  const config = isObject(frame.conversation_config_override) ? frame.conversation_config_override : {};
  const agent = isObject(config.agent) ? config.agent : {};
  const tts = isObject(config.tts) ? config.tts : {};
  return {
    ...(typeof agent.first_message === "string" && agent.first_message.trim() ? { greeting: agent.first_message } : {}),
    ...(typeof tts.voice_id === "string" && tts.voice_id ? { voice: tts.voice_id } : {}),
  };
}

/** A client frame after the first; false when it is not one of the protocol's. */
function deliver(conversation: Conversation, frame: string | Uint8Array): boolean {
  const msg = typeof frame === "string" ? jsonOf(frame) : undefined;
  if (!isObject(msg)) return false;
  if (typeof msg.user_audio_chunk === "string") {
    conversation.audio(Buffer.from(msg.user_audio_chunk, "base64"));
    return true;
  }
  if (typeof msg.type !== "string") return false;
  if (msg.type === "user_message" && typeof msg.text === "string") conversation.type(msg.text);
  // user_activity, contextual_update, feedback, client_tool_result and the initiation data sent
  // again: nothing here acts on them (docs/compat-el.md), but they show the caller is there. A
  // pong does not: the SDK answers pings by itself.
  else if (msg.type !== "pong") conversation.stillHere();
  return true;
}

/** `/el/v1/convai/conversation`: a Speech Engine as a conversation in ElevenLabs' protocol. */
export function elevenLabsConversationSocket(ctx: AppContext): SocketRoute<ConversationSocket> {
  return {
    path: "/el/v1/convai/conversation",
    admit: async (request, query) => {
      const profileId = query.get("agent_id");
      if (!profileId) throw new ApiError("invalid_request", "agent_id is required: the Speech Engine to talk to", { param: "agent_id" });
      return { admission: await admitRealtime(ctx, { secret: query.get("conversation_signature"), profileId, key: elevenLabsKey(request) }) };
    },
    socket: {
      ...conversationSocket,
      open(ws) {
        const { admission } = ws.data;
        const { conn, id } = openConversation(ws, "conv");
        const early: (string | Uint8Array)[] = [];
        const refuse = () => {
          conn.conversation?.abort();
          conn.port.close(CLOSE.policyViolation, "invalid message");
        };
        let start: ((first: string | Uint8Array | undefined) => void) | undefined;
        const first = new Promise<string | Uint8Array | undefined>((resolve) => (start = resolve));
        const waited = setTimeout(() => start?.(undefined), INIT_WAIT_MS);
        conn.onFrame = (frame) => {
          if (start) {
            start(frame);
            start = undefined;
            return;
          }
          if (!conn.conversation) return void early.push(frame);
          if (!deliver(conn.conversation, frame)) refuse();
        };
        void first.then(async (opening) => {
          start = undefined;
          clearTimeout(waited);
          if (conn.gone) return;
          const { credentialError } = admission;
          if (credentialError) return conn.port.close(credentialError.closeCode, closeReason(credentialError.code));
          const opened = openedConversation(admission);
          const init = typeof opening === "string" ? jsonOf(opening) : undefined;
          const isInit = isObject(init) && init.type === "conversation_initiation_client_data";
          const format = opened.plan.stt.audioFormat;
          const port = elConversationPort(conn.port, format);
          let conversation: Conversation;
          try {
            conversation = await startConversation(ctx, id, opened, port, "el", { ...(isInit ? overridesOf(init) : {}), vadScores: true });
          } catch (err) {
            port.stop();
            const error = err instanceof ApiError ? err : new ApiError("internal_error", "the conversation could not start");
            return conn.port.close(error.closeCode, closeReason(error.code));
          }
          if (conn.gone) return conversation.abort();
          conn.conversation = conversation;
          for (const frame of [...(opening !== undefined && !isInit ? [opening] : []), ...early.splice(0)]) if (!deliver(conversation, frame)) return refuse();
        });
      },
    },
  };
}

/** The signed URLs that open a conversation from a browser. */
export function elevenLabsConversationRoutes(ctx: AppContext) {
  return new Elysia().use(elAuth(ctx)).get("/v1/convai/conversation/get-signed-url", async ({ request, principal, query }) => {
    const agentId = typeof query.agent_id === "string" ? query.agent_id : "";
    if (!agentId) throw new ApiError("invalid_request", "agent_id is required", { param: "agent_id" });
    const profile = await ctx.profiles.get(principal.tenantId, agentId);
    const { client_secret } = await ctx.clientSecrets.mint(principal, profile.id, SIGNED_URL_SECONDS);
    const base = publicBase(ctx, request).replace(/^http/, "ws");
    return { signed_url: `${base}/el/v1/convai/conversation?agent_id=${encodeURIComponent(profile.id)}&conversation_signature=${encodeURIComponent(client_secret)}` };
  });
}
