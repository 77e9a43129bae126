import type { ServerWebSocket } from "bun";
import { Elysia } from "elysia";
import { PcmResampler } from "../../audio/resampler.ts";
import type { AppContext } from "../../context.ts";
import { ApiError, closeReason } from "../../errors.ts";
import type { Conversation } from "../../sessions/realtime/conversation.ts";
import { jsonOf, takeFrames } from "../raw-frames.ts";
import { type ConversationConnection, ConversationSockets, handshakesPerRequest, type OpenedHandshake, startConversation } from "../realtime-conversations.ts";
import { WsPort } from "../ws-port.ts";
import { oaiKey } from "./auth.ts";
import { openAiError } from "./errors.ts";
import { oaiRealtimePort, sessionObject } from "./realtime-port.ts";
import { isObject } from "../../util/is-object.ts";

// `/oai/realtime?model=<profile id>`: a realtime profile as a conversation in OpenAI's Realtime
// API (GA events; docs/compat-oai.md). Audio is OpenAI's: 24 kHz PCM both ways, converted to and
// from the profile's recognizer and voice rates.

const OPENAI_PCM_RATE = 24000;

/** The caller's 24 kHz audio at the recognizer's rate, in order. */
function inputAt(rate: number, deliver: (pcm: Uint8Array) => void): (pcm: Uint8Array) => void {
  if (rate === OPENAI_PCM_RATE) return deliver;
  const resampler = PcmResampler.create(OPENAI_PCM_RATE, rate);
  let order: Promise<unknown> = resampler;
  return (pcm) => {
    order = order.then(async () => deliver((await resampler).process(pcm)));
  };
}

export function oaiRealtimeRoute(ctx: AppContext) {
  const connections = new ConversationSockets();
  const handshake = handshakesPerRequest(ctx, (request) => {
    const model = new URL(request.url).searchParams.get("model");
    if (!model) return new ApiError("invalid_request", "model is required: the id of a realtime profile", { param: "model" });
    return { profileId: model, key: oaiKey(request) };
  });

  return new Elysia().ws("/realtime", {
    beforeHandle: async ({ request }) => {
      const { refusal } = await handshake(request);
      if (!refusal) return;
      if (refusal.code === "not_found")
        return openAiError(new ApiError("model_not_found", `${new URL(request.url).searchParams.get("model")} is not a realtime profile of this account`, { param: "model" }));
      return openAiError(refusal);
    },
    open(ws) {
      const raw = ws.raw as ServerWebSocket<unknown>;
      const conn: ConversationConnection = { port: new WsPort(raw), gone: false };
      connections.set(ws, conn);
      const id = `sess_${crypto.randomUUID().replaceAll("-", "")}`;
      const early: (string | Uint8Array)[] = [];
      let audio: ((pcm: Uint8Array) => void) | undefined;
      let profileId = "";
      const error = (code: string, message: string, eventId: unknown) =>
        conn.port.sendEvent({
          type: "error",
          event_id: `event_err_${crypto.randomUUID()}`,
          error: { type: "invalid_request_error", code, message, param: null, event_id: typeof eventId === "string" ? eventId : null },
        });
      const handle = (conversation: Conversation, frame: string | Uint8Array) => {
        const msg = typeof frame === "string" ? jsonOf(frame) : undefined;
        if (!isObject(msg) || typeof msg.type !== "string") return error("invalid_event", "events are JSON objects with a string type", undefined);
        switch (msg.type) {
          case "input_audio_buffer.append":
            if (typeof msg.audio !== "string") return error("invalid_value", "input_audio_buffer.append needs audio (base64)", msg.event_id);
            return audio!(Buffer.from(msg.audio, "base64"));
          case "input_audio_buffer.commit":
            return conversation.commit();
          case "input_audio_buffer.clear":
            return;
          case "session.update":
            // The profile decides the session: the client hears what it is.
            return conn.port.sendEvent({ type: "session.updated", event_id: `event_upd_${crypto.randomUUID()}`, session: sessionObject(id, profileId) });
          case "response.cancel":
            return conversation.cancelAnswer();
          case "conversation.item.create": {
            const item = isObject(msg.item) ? msg.item : {};
            const text = Array.isArray(item.content) ? item.content.find((c: unknown) => isObject(c) && c.type === "input_text" && typeof c.text === "string")?.text : undefined;
            if (item.role === "user" && typeof text === "string") return conversation.type(text);
            return error("unsupported_item", "only user messages with input_text are taken", msg.event_id);
          }
          case "response.create":
            return error("unsupported_event", "the profile's application answers each turn: response.create is not taken", msg.event_id);
          default:
            return error("unsupported_event", `${msg.type.slice(0, 64)} is not supported here`, msg.event_id);
        }
      };
      takeFrames(raw, (frame) => {
        if (!conn.conversation) return void early.push(frame);
        handle(conn.conversation, frame);
      });
      void handshake(ws.data.request).then(async (h) => {
        if (conn.gone) return;
        if (h.closeWith) return conn.port.close(h.closeWith.closeCode, closeReason(h.closeWith.code));
        const opened = h as OpenedHandshake;
        profileId = opened.profile.id;
        const conversation = await startConversation(ctx, id, opened, oaiRealtimePort(conn.port), "oai", { output: { encoding: "pcm_s16le", sampleRate: OPENAI_PCM_RATE } });
        if (conn.gone) return conversation.abort();
        // OpenAI's first event, at once: audio sent from now on is kept while the providers connect.
        conn.port.sendEvent({ type: "session.created", event_id: `event_new_${id}`, session: sessionObject(id, profileId) });
        conn.conversation = conversation;
        audio = inputAt(opened.plan.stt.sampleRate, (pcm) => conversation.audio(pcm));
        for (const frame of early.splice(0)) handle(conversation, frame);
      });
    },
    drain: connections.drain,
    close: connections.close,
  });
}
