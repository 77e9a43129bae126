import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { isObject } from "../../util/is-object.ts";
import { type OpenedHandshake, startConversation } from "../../realtime/start-conversation.ts";
import type { ConversationConnection } from "../realtime-conversations.ts";
import { CallerAudio, inputFormatOf, PCM_24K } from "./realtime-audio.ts";
import { appendedAudio, type ClientEvent, type OaiEvents } from "./realtime-events.ts";
import { type HeardAs, oaiRealtimePort, sessionObject } from "./realtime-port.ts";

// `/oai/realtime?model=<profile id>`: the profile's conversation, its client events taken as
// OpenAI's. The profile decides what is said and by whom; a `session.update` may change how the
// caller is heard (input format, `turn_detection: null` for manual commits) and nothing else.

const OPENAI_OUTPUT = { encoding: "pcm_s16le", sampleRate: 24000 } as const;

/** The members of a session object that a conversation takes; throws `ApiError` naming the one it cannot. */
export function heardFrom(session: Record<string, unknown>, now: HeardAs): HeardAs {
  if (session.type !== undefined && session.type !== "realtime") {
    throw new ApiError("invalid_request", "a profile's session is a realtime session: session.type must be realtime", { param: "session.type" });
  }
  const input = isObject(session.audio) && isObject(session.audio.input) ? session.audio.input : {};
  return {
    format: inputFormatOf(input.format, "session.audio.input.format") ?? now.format,
    manualCommits: "turn_detection" in input ? input.turn_detection === null : now.manualCommits,
  };
}

/**
 * Starts the conversation and says `session.created`; resolves to the socket's frame handler, or
 * undefined when the socket closed meanwhile. Audio is kept from the first frame on (the caller
 * holds frames that came before).
 */
export async function oaiConversation(ctx: AppContext, id: string, h: OpenedHandshake, conn: ConversationConnection, events: OaiEvents) {
  const port = oaiRealtimePort(events);
  const conversation = await startConversation(ctx, id, h, port, "oai", { output: OPENAI_OUTPUT });
  if (conn.gone) return void conversation.abort();
  conn.conversation = conversation;
  let heard: HeardAs = { format: PCM_24K, manualCommits: h.plan.stt.commitStrategy === "manual" };
  let audio = new CallerAudio(heard.format, h.plan.stt.sampleRate, (pcm) => conversation.audio(pcm));
  conn.onClose = () => audio.release();

  const apply = async (session: Record<string, unknown>) => {
    const next = heardFrom(session, heard);
    if (next.manualCommits !== heard.manualCommits) await conversation.commitTurnsManually(next.manualCommits);
    if (next.format !== heard.format) {
      audio.release();
      audio = new CallerAudio(next.format, h.plan.stt.sampleRate, (pcm) => conversation.audio(pcm));
    }
    heard = next;
  };
  const update = async (msg: ClientEvent) => {
    try {
      await apply(isObject(msg.session) ? msg.session : {});
      events.send({ type: "session.updated", session: sessionObject(id, h.profile.id, heard) });
    } catch (err) {
      events.error(err instanceof ApiError ? err : new ApiError("invalid_request", (err as Error).message, { param: "session" }), msg);
    }
  };

  // A client secret's settings are the session's from the start, as OpenAI's are.
  // Settings the recognizers cannot take leave the profile's, as the client will see in session.created.
  if (h.session) await apply(h.session).catch(() => {});
  events.send({ type: "session.created", session: sessionObject(id, h.profile.id, heard) });

  return (frame: string | Uint8Array) => {
    const msg = events.parse(frame);
    if (!msg) return;
    if (msg.type === "input_audio_buffer.append") {
      const bytes = appendedAudio(msg, events);
      // The audio tells the conversation the client is here when it is delivered.
      return bytes ? audio.write(bytes) : conversation.stillHere();
    }
    conversation.stillHere();
    switch (msg.type) {
      case "input_audio_buffer.commit":
        return conversation.commit();
      case "input_audio_buffer.clear":
        conversation.clear();
        return events.send({ type: "input_audio_buffer.cleared" });
      case "session.update":
        return void update(msg);
      case "response.cancel":
        return conversation.cancelAnswer();
      case "conversation.item.create": {
        const item = isObject(msg.item) ? msg.item : {};
        const text = Array.isArray(item.content) ? item.content.find((c: unknown) => isObject(c) && c.type === "input_text" && typeof c.text === "string")?.text : undefined;
        if (item.role === "user" && typeof text === "string") return conversation.type(text);
        return events.unsupported(msg, "takes only user messages with input_text here");
      }
      case "conversation.item.retrieve":
        return port.items.retrieve(msg);
      case "conversation.item.truncate":
        return port.items.truncate(msg);
      case "response.create":
        return events.unsupported(msg, "is not taken: the profile's application answers each turn");
      default:
        return events.unsupported(msg);
    }
  };
}
