import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError, closeReason, ERRORS } from "../../errors.ts";
import type { Conversation } from "../../sessions/realtime/conversation.ts";
import { nativeError } from "../error-responses.ts";
import { jsonOf, takeFrames } from "../raw-frames.ts";
import { ConversationSockets, handshakesPerRequest, type OpenedHandshake, startConversation } from "../realtime-conversations.ts";
import { NATIVE_PROTOCOL, nativeSocketKey } from "./auth.ts";
import { answerProtocol } from "../ws-subprotocols.ts";
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

export function realtimeRoute(ctx: AppContext) {
  const connections = new ConversationSockets();
  const handshake = handshakesPerRequest(ctx, (request) => {
    const query = new URL(request.url).searchParams;
    const opening = { secret: query.get("client_secret"), profileId: query.get("profile_id"), key: nativeSocketKey(request) };
    if (opening.secret || opening.profileId) return opening;
    return new ApiError("invalid_request", "open the socket with client_secret, or with profile_id and a Bearer key", { param: "profile_id" });
  });

  return new Elysia()
    .get("/v1/realtime", () => nativeError(new ApiError("websocket_upgrade_required", "connect with a WebSocket upgrade")))
    .ws("/v1/realtime", {
      // Runs before the upgrade, possibly twice: the handshake's work is done once.
      beforeHandle: async ({ request, set }) => {
        const { refusal } = await handshake(request);
        if (refusal) return nativeError(refusal);
        answerProtocol(request, set, NATIVE_PROTOCOL);
      },
      open(ws) {
        const { raw, conn, id } = connections.open(ws, "rt");
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
        void handshake(ws.data.request).then(async (h) => {
          if (conn.gone) return;
          if (h.closeWith) return conn.port.close(h.closeWith.closeCode, closeReason(h.closeWith.code));
          const conversation = await startConversation(ctx, id, h as OpenedHandshake, nativeRealtimePort(conn.port, id), "native");
          if (conn.gone) return conversation.abort();
          conn.conversation = conversation;
          for (const frame of early.splice(0)) if (!deliver(conversation, frame)) return reject();
        });
      },
      drain: connections.drain,
      close: connections.close,
    });
}
