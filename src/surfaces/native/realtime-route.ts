import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError, closeReason, ERRORS } from "../../errors.ts";
import type { Conversation } from "../../realtime/conversation/conversation.ts";
import { nativeError } from "../error-responses.ts";
import { jsonOf } from "../raw-frames.ts";
import type { SocketRoute } from "../socket-routes.ts";
import { startConversation } from "../../realtime/start-conversation.ts";
import { admitRealtime, type ConversationSocket, conversationSocket, openConversation, openedConversation } from "../realtime-conversations.ts";
import { NATIVE_PROTOCOL, nativeSocketKey } from "./auth.ts";
import { errorEvent } from "./numbered-events.ts";
import { nativeRealtimePort } from "./realtime-wire.ts";

// `/v1/realtime`: a realtime profile run as a live conversation (docs/realtime.md). The socket is
// opened with a single-use `client_secret`, or with `profile_id` and a Bearer key
// (realtime-conversations.ts does the handshake and builds the conversation).

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

/** `/v1/realtime` without a WebSocket upgrade. */
export function realtimeRoute() {
  return new Elysia().get("/v1/realtime", () => nativeError(new ApiError("websocket_upgrade_required", "connect with a WebSocket upgrade")));
}

export function realtimeSocket(ctx: AppContext): SocketRoute<ConversationSocket> {
  return {
    path: "/v1/realtime",
    protocol: NATIVE_PROTOCOL,
    admit: async (request, query) => {
      const opening = { secret: query.get("client_secret"), profileId: query.get("profile_id"), key: nativeSocketKey(request) };
      if (!opening.secret && !opening.profileId) throw new ApiError("invalid_request", "open the socket with client_secret, or with profile_id and a Bearer key", { param: "profile_id" });
      return { admission: await admitRealtime(ctx, opening) };
    },
    socket: {
      ...conversationSocket,
      open(ws) {
        const { admission } = ws.data;
        const { conn, id } = openConversation(ws, "rt");
        // Audio sent before the conversation exists is kept, then delivered in order.
        const early: (string | Uint8Array)[] = [];
        const reject = () => {
          conn.port.sendEvent(errorEvent("realtime", { code: "invalid_realtime_frame", message: FRAME_RULE }));
          conn.conversation?.abort();
          conn.port.close(ERRORS.invalid_realtime_frame.close, closeReason("invalid_realtime_frame"));
        };
        conn.onFrame = (frame) => {
          if (!conn.conversation) return void early.push(frame);
          if (!deliver(conn.conversation, frame)) reject();
        };
        const { credentialError } = admission;
        if (credentialError) return conn.port.close(credentialError.closeCode, closeReason(credentialError.code));
        void startConversation(ctx, id, openedConversation(admission), nativeRealtimePort(conn.port, id), "native").then((conversation) => {
          if (conn.gone) return conversation.abort();
          conn.conversation = conversation;
          for (const frame of early.splice(0)) if (!deliver(conversation, frame)) return reject();
        });
      },
    },
  };
}
