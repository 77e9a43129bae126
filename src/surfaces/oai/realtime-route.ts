import type { AppContext } from "../../context.ts";
import { ApiError, closeReason } from "../../errors.ts";
import type { SocketRoute } from "../socket-routes.ts";
import { admitRealtime, type ConversationSocket, conversationSocket, openConversation, openedConversation } from "../realtime-conversations.ts";
import { oaiConversation } from "./realtime-conversation.ts";
import { OAI_PROTOCOL, realtimeCredential } from "./realtime-credential.ts";
import { OaiEvents } from "./realtime-events.ts";
import { oaiTranscription } from "./realtime-transcription.ts";

// `/oai/realtime`: OpenAI's Realtime API (GA events; docs/compat-oai.md). `?model=<profile id>`
// runs that profile as a conversation; `?intent=transcription`, or no model, is a transcription
// session of any streaming STT model. A client secret (`ek_…`) opens what it was minted for.

export function oaiRealtimeSocket(ctx: AppContext): SocketRoute<ConversationSocket> {
  return {
    path: "/oai/realtime",
    protocol: OAI_PROTOCOL,
    admit: async (request, query) => {
      const model = query.get("intent") === "transcription" ? null : query.get("model");
      try {
        return { admission: await admitRealtime(ctx, { ...realtimeCredential(request), profileId: model, transcription: true }) };
      } catch (err) {
        if (err instanceof ApiError && err.code === "not_found")
          throw new ApiError("model_not_found", `${model} is neither a realtime profile of this account nor a transcription session`, { param: "model" });
        throw err;
      }
    },
    socket: {
      ...conversationSocket,
      open(ws) {
        const { admission } = ws.data;
        const { conn, id } = openConversation(ws, "sess");
        const events = new OaiEvents(conn.port);
        /** Frames that come while the session starts, taken in order once it has. */
        const early: (string | Uint8Array)[] = [];
        let handle: ((frame: string | Uint8Array) => void) | undefined;
        conn.onFrame = (frame) => (handle ? handle(frame) : void early.push(frame));
        const refused = admission.credentialError;
        // As OpenAI does, the refusal is an error event before the close.
        if (refused) {
          events.error(refused);
          return conn.port.close(refused.closeCode, closeReason(refused.code));
        }
        const { payer } = admission;
        const opening = admission.plan ? oaiConversation(ctx, id, openedConversation(admission), conn, events) : oaiTranscription(ctx, id, payer, conn, events, payer.session);
        void opening.then((opened) => {
          handle = opened;
          if (!handle) return;
          for (const frame of early.splice(0)) handle(frame);
        });
      },
    },
  };
}
