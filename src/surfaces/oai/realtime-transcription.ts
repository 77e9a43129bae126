import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import type { Payer } from "../../ledger/meter-types.ts";
import { SttSession } from "../../sessions/stt-session.ts";
import { isObject } from "../../util/is-object.ts";
import { planWithNames } from "../../planning/members.ts";
import { planStt } from "../../planning/plan-stt.ts";
import type { SttRequest } from "../../planning/stt-request.ts";
import type { PortableValues } from "../../providers/stt-types.ts";
import { NO_PREFERENCES } from "../../routing/preferences.ts";
import type { ConversationConnection } from "../realtime-conversations.ts";
import { meteredSession } from "../../sessions/admission.ts";
import { CallerAudio, type InputFormat, inputFormatOf, PCM_24K } from "./realtime-audio.ts";
import { appendedAudio, type ClientEvent, type OaiEvents } from "./realtime-events.ts";
import { oaiTranscriptionPort } from "./realtime-transcription-port.ts";

// An `/oai/realtime` transcription session: OpenAI's transcription-only Realtime session onto a
// `/v1/stt` session of any streaming model this deployment has (`pocketsphinx`,
// `deepgram/nova-3` …), with no application. The first `session.update` naming
// `audio.input.transcription.model` (or the client secret's session) starts it; audio appended
// before then is kept, up to `UNCONFIGURED_AUDIO_BYTES`.

/** 30 s of 24 kHz PCM: what a client may send before it names the model. */
export const UNCONFIGURED_AUDIO_BYTES = 30 * 48_000;

const TRANSCRIPTION = "session.audio.input.transcription";

/** What a transcription session runs with, as its session object tells it. */
export interface TranscriptionSettings {
  model: string;
  language?: string;
  format: InputFormat;
  /** OpenAI's `turn_detection`: null for manual commits. */
  turnDetection: Record<string, unknown> | null;
}

export function settingsFrom(session: Record<string, unknown>): TranscriptionSettings {
  if (session.type !== "transcription") {
    throw new ApiError("invalid_request", 'a session opened without a model is a transcription session: session.type must be "transcription"', { param: "session.type" });
  }
  const input = isObject(session.audio) && isObject(session.audio.input) ? session.audio.input : {};
  const transcription = isObject(input.transcription) ? input.transcription : {};
  if (typeof transcription.model !== "string" || !transcription.model) throw new ApiError("model_required", "a transcription session needs a model", { param: `${TRANSCRIPTION}.model` });
  const turn = input.turn_detection;
  if (turn !== undefined && turn !== null && !(isObject(turn) && (turn.type === "server_vad" || turn.type === "semantic_vad"))) {
    throw new ApiError("invalid_request", "turn_detection must be null, server_vad or semantic_vad", { param: "session.audio.input.turn_detection" });
  }
  return {
    model: transcription.model,
    ...(typeof transcription.language === "string" && transcription.language ? { language: transcription.language } : {}),
    format: inputFormatOf(input.format, "session.audio.input.format") ?? PCM_24K,
    turnDetection: turn === undefined ? { type: "server_vad" } : (turn as Record<string, unknown> | null),
  };
}

/** The settings as a typed STT request (docs/stt-websocket.md), planned and checked as a `/v1/stt` session is. */
function sttRequest(s: TranscriptionSettings): SttRequest {
  const portable: PortableValues = { interim_results: true, ...(s.language ? { language: s.language } : {}) };
  const turn = s.turnDetection;
  const request: SttRequest = { model: s.model, audioFormat: "pcm_16000", portable, options: {}, preferences: NO_PREFERENCES };
  if (!turn) request.commitStrategy = "manual";
  else if (turn.type === "semantic_vad") request.turnDetection = "semantic";
  else {
    if (typeof turn.silence_duration_ms === "number") portable.silence_duration_ms = turn.silence_duration_ms;
    if (typeof turn.threshold === "number") portable.speech_threshold = turn.threshold;
  }
  return request;
}

/** The request's members as the session members they came from; every other one is a turn setting. */
const MEMBERS: Record<string, string> = { model: `${TRANSCRIPTION}.model`, "portable.language": `${TRANSCRIPTION}.language`, audioFormat: "session.audio.input.format" };

/** The settings planned as a `/v1/stt` session is; a refusal names the session member at fault. */
export function planTranscription(ctx: AppContext, settings: TranscriptionSettings) {
  return planWithNames(
    () => planStt(ctx.catalogue, (pid) => ctx.sttProviders.get(pid), sttRequest(settings)),
    (member) => MEMBERS[member ?? "model"] ?? "session.audio.input.turn_detection",
  );
}

export function transcriptionSessionObject(id: string | undefined, s: TranscriptionSettings | undefined) {
  return {
    type: "transcription",
    object: "realtime.transcription_session",
    ...(id ? { id } : {}),
    audio: {
      input: {
        format: s?.format ?? PCM_24K,
        transcription: s ? { model: s.model, language: s.language ?? null } : null,
        noise_reduction: null,
        turn_detection: s ? s.turnDetection : { type: "server_vad" },
      },
    },
    include: null,
  };
}

/** The socket's frame handler for a transcription session of `payer`; says `session.created` now. */
export async function oaiTranscription(ctx: AppContext, id: string, payer: Payer, conn: ConversationConnection, events: OaiEvents, secretSession?: Record<string, unknown>) {
  let settings: TranscriptionSettings | undefined;
  let session: SttSession | undefined;
  let audio: CallerAudio | undefined;
  /** Audio before the model is known, and frames that came while the session was being set up. */
  const unheard: Uint8Array[] = [];
  let unheardBytes = 0;
  let held: ClientEvent[] | undefined;
  conn.onClose = () => {
    session?.abort();
    audio?.release();
  };

  const start = async (next: TranscriptionSettings) => {
    const plan = planTranscription(ctx, next);
    const candidates = await ctx.meter.admit(payer, plan.candidates);
    if (conn.gone) return;
    const sttId = `${id}.stt`;
    session = new SttSession(
      { ...plan, id: sttId, admit: () => meteredSession(ctx.meter, sttId, payer, candidates, "oai"), idleTimeoutMs: ctx.config.sessionLimits.sttIdleTimeoutMs },
      {
        provider: (pid) => ctx.sttProviders.get(pid),
        port: oaiTranscriptionPort(events),
        log: ctx.log,
        metrics: ctx.metrics,
        connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
        health: ctx.health,
        surface: "oai",
        vadLanes: ctx.vadLanes,
      },
    );
    ctx.sessions.add(session, "stt");
    const heard = session;
    audio = new CallerAudio(next.format, plan.sampleRate, (pcm) => heard.audio(pcm));
    settings = next;
    for (const bytes of unheard.splice(0)) audio.write(bytes);
    unheardBytes = 0;
  };

  /** Takes a session object; a running session's settings stay as they are. */
  const configure = async (sessionObject: Record<string, unknown>) => {
    const next = settingsFrom(sessionObject);
    if (!settings) return start(next);
    if (JSON.stringify(next) !== JSON.stringify(settings)) {
      throw new ApiError("invalid_request", "a transcription session's model, language, format and turn detection are fixed once it has started", { param: "session" });
    }
  };

  const update = async (msg: ClientEvent) => {
    held = [];
    try {
      await configure(isObject(msg.session) ? msg.session : {});
      events.send({ type: "session.updated", session: transcriptionSessionObject(id, settings) });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      events.error(err, msg);
      // No money, no session: as /v1/stt closes.
      if (err.code === "insufficient_balance") return events.port.close(err.closeCode, err.code);
    } finally {
      const waiting = held;
      held = undefined;
      for (const m of waiting) handle(m);
    }
  };

  const handle = (msg: ClientEvent): void => {
    if (held) return void held.push(msg);
    switch (msg.type) {
      case "input_audio_buffer.append": {
        const bytes = appendedAudio(msg, events);
        if (!bytes) return;
        if (audio) return audio.write(bytes);
        if (unheardBytes + bytes.byteLength > UNCONFIGURED_AUDIO_BYTES) {
          return events.error(
            new ApiError("invalid_request", `name the model (session.update with ${TRANSCRIPTION}.model) before sending more than ${UNCONFIGURED_AUDIO_BYTES} bytes of audio`, {
              param: `${TRANSCRIPTION}.model`,
            }),
            msg,
          );
        }
        unheard.push(bytes);
        unheardBytes += bytes.byteLength;
        return;
      }
      case "input_audio_buffer.commit":
        if (session) return session.command({ type: "commit" });
        return events.error(new ApiError("invalid_request", "nothing is being transcribed yet: name the model first", { param: `${TRANSCRIPTION}.model` }), msg);
      case "input_audio_buffer.clear":
        if (session) return session.command({ type: "clear" });
        unheard.length = unheardBytes = 0;
        return events.send({ type: "input_audio_buffer.cleared" });
      case "session.update":
        return void update(msg);
      default:
        return events.unsupported(msg, "is not part of a transcription session");
    }
  };

  if (secretSession) await configure(secretSession).catch((err) => events.error(err instanceof ApiError ? err : new ApiError("internal_error")));
  if (conn.gone) return;
  events.send({ type: "session.created", session: transcriptionSessionObject(id, settings) });
  return (frame: string | Uint8Array) => {
    const msg = events.parse(frame);
    if (msg) handle(msg);
  };
}
