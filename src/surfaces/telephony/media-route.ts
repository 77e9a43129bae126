import { randomBytes } from "node:crypto";
import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError, CLOSE, closeReason, ERRORS } from "../../errors.ts";
import { startConversation } from "../../realtime/start-conversation.ts";
import { CallerAudio } from "../oai/realtime-audio.ts";
import { nativeError } from "../error-responses.ts";
import { takeFrames } from "../raw-frames.ts";
import { admitRealtime, type ConversationConnection, ConversationSockets, openedConversation } from "../realtime-conversations.ts";
import { CREDENTIAL_PARAMETER } from "./call-markup.ts";
import { type CallGrant, MEDIA_PATH } from "./call-webhook-route.ts";
import { ChunkOrder } from "./chunk-order.ts";
import type { CarrierEvent, MediaWire } from "./media-wire.ts";
import { phoneCallPort } from "./phone-call-port.ts";
import { telnyxMediaWire } from "./telnyx-media-wire.ts";
import { twilioMediaWire } from "./twilio-media-wire.ts";

// The carriers' media sockets (docs/telephony.md#the-media-socket): `/v1/telephony/media/twilio`
// and `/v1/telephony/media/telnyx`, each speaking its carrier's frames. The call's single-use
// credential is checked on `start` (Twilio's comes as a custom parameter, Telnyx's in the URL's
// query); a socket without a valid one within START_WITHIN_MS is closed and nothing is billed.
// Then the profile's conversation runs as on `/v1/realtime`: caller µ-law to the recognizer
// (converted only when its model does not take µ-law), answers back as µ-law, DTMF to the
// application, and the carrier's `stop` (the caller hung up) ends it, each part billing what it used.
// Caller frames are taken in their `chunk` order (chunk-order.ts).

export const START_WITHIN_MS = 5000;

const WIRES: Record<string, MediaWire> = { twilio: twilioMediaWire, telnyx: telnyxMediaWire };

/** The call's id in the conversation's and its records' ids: the carrier's own, in the characters an id takes. */
const conversationId = (callId: string) => `call_${callId.replace(/[^A-Za-z0-9_-]/g, "").slice(0, 64)}_${randomBytes(4).toString("hex")}`;

interface CallState {
  conn: ConversationConnection;
  /** Caller audio that came before the conversation was made, delivered once it is. */
  early: Uint8Array[];
  started: boolean;
  hear?: (payload: Uint8Array) => void;
  /** What the call holds that the socket's close must free (its session's lease, the audio converter). */
  release: (() => void)[];
}

export function telephonyMediaRoutes(ctx: AppContext) {
  const connections = new ConversationSockets();

  async function begin(carrier: string, state: CallState, start: Extract<CarrierEvent, { type: "start" }>, queryCredential: string | undefined) {
    const { conn } = state;
    const { [CREDENTIAL_PARAMETER]: parameterCredential, ...customParameters } = start.customParameters;
    const credential = carrier === "twilio" ? parameterCredential : queryCredential;
    let admission: Awaited<ReturnType<typeof admitRealtime>>;
    try {
      if (!credential) throw new ApiError("invalid_client_secret", "the stream carries no credential");
      admission = await admitRealtime(ctx, { secret: credential, phone: true });
      if (admission.credentialError) throw admission.credentialError;
    } catch (err) {
      const error = err instanceof ApiError ? err : new ApiError("internal_error");
      ctx.log.info({ carrier, callId: start.callId, code: error.code }, "call stream refused");
      return conn.port.close(error.closeCode, closeReason(error.code));
    }
    if (conn.gone) return admission.lease?.release();
    admission.lease?.opened();
    state.release.push(() => admission.lease?.release());
    const opened = openedConversation(admission);
    const grant = opened.session as CallGrant | undefined;
    const id = conversationId(grant?.call.callSid || start.callId);
    const log = ctx.log.child({ call: id, carrier, callId: start.callId });
    const port = phoneCallPort(conn.port, WIRES[carrier]!.reply(start.streamId), log);
    const conversation = await startConversation(ctx, id, opened, port, "telephony", {
      call: { identity: grant?.call ?? { callSid: start.callId }, customParameters: { ...grant?.customParameters, ...customParameters } },
    });
    if (conn.gone) return conversation.abort();
    conn.conversation = conversation;
    const { stt } = opened.plan;
    if (stt.audioFormat === "ulaw_8000") state.hear = (payload) => conversation.audio(payload);
    else {
      const audio = new CallerAudio({ type: "audio/pcmu" }, stt.sampleRate, (pcm) => conversation.audio(pcm));
      state.hear = (payload) => audio.write(payload);
      state.release.push(() => audio.release());
    }
    for (const payload of state.early.splice(0)) state.hear(payload);
    log.info({ sttFormat: stt.audioFormat }, "call started");
  }

  function route(carrier: string) {
    const wire = WIRES[carrier]!;
    return {
      open(ws: { raw: unknown; data: { query: Record<string, string | undefined> } }) {
        const { raw, conn } = connections.open(ws, "call");
        const state: CallState = { conn, early: [], started: false, release: [] };
        const inOrder = new ChunkOrder((payload) => (state.hear ? state.hear(payload) : void state.early.push(payload)));
        const queryCredential = ws.data.query.credential;
        const deadline = setTimeout(() => {
          if (!state.started && !conn.gone) conn.port.close(ERRORS.invalid_media_frame.close, closeReason("invalid_media_frame"));
        }, START_WITHIN_MS);
        const refuse = (why: string) => {
          ctx.log.info({ carrier, reason: why }, "call stream closed: a frame the carrier does not send");
          conn.conversation?.abort();
          conn.port.close(ERRORS.invalid_media_frame.close, closeReason("invalid_media_frame"));
        };
        takeFrames(raw, (frame) => {
          const ev = wire.read(frame);
          if ("invalid" in ev) return refuse(ev.invalid);
          switch (ev.type) {
            case "start":
              if (state.started) return;
              state.started = true;
              clearTimeout(deadline);
              return void begin(carrier, state, ev, queryCredential).catch((err: unknown) => {
                const error = err instanceof ApiError ? err : new ApiError("internal_error");
                ctx.log.info({ carrier, callId: ev.callId, code: error.code, reason: String(err) }, "call ended");
                conn.port.close(error.closeCode, closeReason(error.code));
              });
            case "media":
              if (!state.started) return refuse("media before start");
              return inOrder.take(ev.payload, ev.chunk);
            case "dtmf":
              return conn.conversation?.dtmf(ev.digit);
            case "stop":
              ctx.log.info({ carrier, reason: "caller_hung_up" }, "call ended");
              conn.conversation?.abort();
              return conn.port.close(CLOSE.normal, "call_ended");
            default:
              return;
          }
        });
        conn.onClose = () => {
          clearTimeout(deadline);
          for (const free of state.release) free();
        };
      },
      drain: connections.drain,
      close: connections.close,
    };
  }

  const upgradeFirst = () => nativeError(new ApiError("websocket_upgrade_required", "the carrier connects with a WebSocket upgrade"));
  return new Elysia().get(`${MEDIA_PATH}/twilio`, upgradeFirst).get(`${MEDIA_PATH}/telnyx`, upgradeFirst).ws(`${MEDIA_PATH}/twilio`, route("twilio")).ws(`${MEDIA_PATH}/telnyx`, route("telnyx"));
}
