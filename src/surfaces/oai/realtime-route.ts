import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError, closeReason } from "../../errors.ts";
import { takeFrames } from "../raw-frames.ts";
import { ConversationSockets, handshakesPerRequest, type OpenedHandshake } from "../realtime-conversations.ts";
import { openAiError } from "./errors.ts";
import { oaiConversation } from "./realtime-conversation.ts";
import { answerProtocol } from "../ws-subprotocols.ts";
import { OAI_PROTOCOL, realtimeCredential } from "./realtime-credential.ts";
import { OaiEvents } from "./realtime-events.ts";
import { oaiTranscription } from "./realtime-transcription.ts";

// `/oai/realtime`: OpenAI's Realtime API (GA events; docs/compat-oai.md). `?model=<profile id>`
// runs that profile as a conversation; `?intent=transcription`, or no model, is a transcription
// session of any streaming STT model. A client secret (`ek_…`) opens what it was minted for.

export function oaiRealtimeRoute(ctx: AppContext) {
  const connections = new ConversationSockets();
  const handshake = handshakesPerRequest(ctx, (request) => {
    const query = new URL(request.url).searchParams;
    const transcription = query.get("intent") === "transcription";
    return { ...realtimeCredential(request), profileId: transcription ? null : query.get("model"), transcription: true };
  });

  return new Elysia().ws("/realtime", {
    beforeHandle: async ({ request, set }) => {
      const { refusal } = await handshake(request);
      if (refusal?.code === "not_found")
        return openAiError(
          new ApiError("model_not_found", `${new URL(request.url).searchParams.get("model")} is neither a realtime profile of this account nor a transcription session`, { param: "model" }),
        );
      if (refusal) return openAiError(refusal);
      answerProtocol(request, set, OAI_PROTOCOL);
    },
    open(ws) {
      const { raw, conn, id } = connections.open(ws, "sess");
      const events = new OaiEvents(conn.port);
      /** Frames that come while the session starts, taken in order once it has. */
      const early: (string | Uint8Array)[] = [];
      let handle: ((frame: string | Uint8Array) => void) | undefined;
      takeFrames(raw, (frame) => (handle ? handle(frame) : void early.push(frame)));
      void handshake(ws.data.request).then(async (h) => {
        if (conn.gone) return;
        if (h.closeWith) return conn.port.close(h.closeWith.closeCode, closeReason(h.closeWith.code));
        handle = h.profile ? await oaiConversation(ctx, id, h as OpenedHandshake, conn, events) : await oaiTranscription(ctx, id, h.payer!, conn, events, h.session);
        if (!handle) return;
        for (const frame of early.splice(0)) handle(frame);
      });
    },
    drain: connections.drain,
    close: connections.close,
  });
}
