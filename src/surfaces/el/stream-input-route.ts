import { Elysia } from "elysia";
import { bearerToken } from "../../accounts/keys.ts";
import type { AppContext } from "../../context.ts";
import { ApiError, CLOSE } from "../../errors.ts";
import type { TtsCommand } from "../../sessions/tts-events.ts";
import { ttsSessionDeps } from "../tts-session-deps.ts";
import { TtsSession } from "../../sessions/tts-session.ts";
import { clientAddress } from "../client-address.ts";
import { withLexicon } from "../pronunciation-locators.ts";
import { admitChannel, channelSession, type SocketAdmission, withLateKey } from "../ws-admission.ts";
import { elevenLabsKey } from "./auth.ts";
import { elevenLabsError } from "./errors.ts";
import { KeylessSockets, type KeylessSlot } from "./keyless-sockets.ts";
import { parseInitFrame, parseTextFrame, type InitFrame } from "./stream-input-frames.ts";
import { transcoding } from "./output-format.ts";
import { FrameAligner } from "./stream-input-alignment.ts";
import { StreamInputPort } from "./stream-input-port.ts";
import { planStreamInput, type StreamInputPlan } from "./stream-input-request.ts";
import { keepConnection, type SocketData, takeConnection } from "../ws-connections.ts";
import { jsonOf } from "../raw-frames.ts";
import type { SocketRoute } from "../socket-routes.ts";
import { recordId } from "../../util/record-id.ts";

interface Connection {
  /** The handshake carried a key (valid or not), which wins over the init frame's. */
  keyed: boolean;
  admission: SocketAdmission<StreamInputPlan>;
  port: StreamInputPort;
  /** Closes the socket after `inactivity_timeout` seconds without a client frame; stopped by the end of input. */
  idle?: Timer;
  /** While a handshake without a valid key waits for its init frame: the deadline and the address's slot. */
  keyless?: KeylessSlot;
  /** Started by the init frame, which carries the voice settings and maybe the key. */
  session?: TtsSession;
}

const PATH = "/v1/text-to-speech/:voice_id/stream-input";
const OPEN_BRACE = 123;

type StreamInputSocket = SocketData<Connection> & Pick<Connection, "keyed" | "admission" | "keyless">;

/** The close a bad client frame calls for: 1009 for a text over the frame limit, else ElevenLabs' 1008. */
const frameError = (err: unknown) => (err instanceof ApiError && err.code === "tts_text_frame_too_large" ? "tts_text_frame_too_large" : "invalid_tts_frame");

/** The key of the handshake: `xi-api-key` or Bearer, else the `authorization` query parameter ElevenLabs also reads. */
function handshakeKey(request: Request, query: URLSearchParams): string | undefined {
  const key = query.get("authorization");
  return elevenLabsKey(request) ?? (key ? (bearerToken(key) ?? key) : undefined);
}

/**
 * `/el/v1/text-to-speech/{voice_id}/stream-input`: ElevenLabs' input-streaming TTS socket onto a
 * TTS session. Before the upgrade: query errors (400) and, for a known handshake key, an account
 * that cannot pay (402), in the `{detail}` envelope. After it, everything waits for the init
 * frame, since browsers can only send the key there: the handshake key wins over the frame's;
 * a missing or invalid key closes 4401, a disabled account or excluded providers 4403.
 * A handshake without a valid key must send its init frame within `EL_INIT_TIMEOUT_MS`, and one
 * client address may have only so many of those waiting (429 before the upgrade beyond that).
 */
export function elevenLabsStreamInputSocket(ctx: AppContext): SocketRoute<StreamInputSocket> {
  const { elInitTimeoutMs, elUnauthenticatedPerAddress } = ctx.config.sessionLimits;
  const keyless = new KeylessSockets(elInitTimeoutMs, elUnauthenticatedPerAddress);

  /** A handshake without a valid key: a slot of its address, or 429. */
  function waitForKey(address: string, reason: ApiError): KeylessSlot {
    const slot = keyless.reserve(address, reason);
    if (slot) return slot;
    throw new ApiError(
      "too_many_concurrent_requests",
      `too many sockets from this address are waiting for their init frame (at most ${elUnauthenticatedPerAddress}); send the key in the handshake or the init frame sooner`,
      { retry_after: keyless.retryAfterSeconds },
    );
  }

  /** The init frame did not come in time: closed as a socket without a key. */
  function initTooLate(conn: Connection, slot: KeylessSlot): void {
    const seconds = elInitTimeoutMs / 1000;
    conn.port.refuse(new ApiError(slot.reason.code, `${slot.reason.message}; without a valid key in the handshake, the init frame must come within ${seconds} s`));
  }

  function start(conn: Connection, message: unknown): void {
    const { admission } = conn;
    const { plan } = admission;
    let init: InitFrame;
    let settings: { speed?: number; options: Record<string, string> };
    try {
      init = parseInitFrame(message);
      settings = plan?.speedAndOptions(init.fields) ?? { options: {} };
    } catch (err) {
      return conn.port.refuse(new ApiError(frameError(err), (err as Error).message));
    }
    const id = recordId("tts");
    const session = new TtsSession(
      {
        id,
        voice: plan?.voice,
        format: plan?.format ?? "mp3",
        ...(plan?.pcm ? { sampleRate: plan.pcm.rate } : {}),
        autoFlush: true,
        ...settings,
        alignment: plan?.syncAlignment,
        cache: plan?.cache,
        // The handshake's key wins over the frame's.
        admit: async () => {
          const admitted = conn.keyed ? admission : await withLateKey(ctx, admission, init.key);
          return withLexicon(ctx, () => channelSession(ctx, id, admitted, "el"), admitted.payer, init.pronunciation);
        },
      },
      ttsSessionDeps(ctx, conn.port, "el"),
    );
    conn.session = session;
    ctx.sessions.add(session, "tts");
    for (const cmd of init.commands) session.command(cmd);
  }

  return {
    path: `/el${PATH}`,
    admit: async (request, query, params, server) => {
      const key = handshakeKey(request, query);
      const admission = await admitChannel(ctx, key, () => planStreamInput(ctx.catalogue, params.voice_id!, query));
      const { credentialError } = admission;
      return { keyed: Boolean(key), admission, keyless: credentialError && waitForKey(clientAddress(ctx.config, request, server), credentialError) };
    },
    socket: {
      open(ws) {
        const { keyed, admission, keyless } = ws.data;
        const { plan } = admission;
        const seconds = plan?.inactivitySeconds ?? 20;
        // ElevenLabs' own words (shortened to fit a close reason); the session ends as if the client left.
        const idle = setTimeout(() => ws.close(CLOSE.policyViolation, `Have not received a new text input within the timeout of ${seconds} seconds.`), seconds * 1000);
        const aligner = plan?.syncAlignment ? new FrameAligner() : undefined;
        const conn: Connection = { keyed, admission, port: new StreamInputPort(ws, plan?.pcm, transcoding(plan?.transcode).encoder, aligner), idle, keyless };
        keyless?.onExpiry(() => initTooLate(conn, keyless));
        keepConnection(ws, conn);
      },
      message(ws, frame) {
        const conn = ws.data.connection;
        if (!conn) return;
        conn.idle?.refresh();
        conn.keyless?.release();
        // A text frame that opens with `{` is read as JSON; anything else is refused by the frame parsers.
        const message = typeof frame === "string" && frame.charCodeAt(0) === OPEN_BRACE ? (jsonOf(frame) ?? frame) : frame;
        if (!conn.session) return start(conn, message);
        let commands: TtsCommand[];
        try {
          commands = parseTextFrame(message);
        } catch (err) {
          return conn.session.reject(frameError(err), (err as Error).message);
        }
        for (const cmd of commands) {
          conn.session.command(cmd);
          if (cmd.type !== "close") continue;
          clearTimeout(conn.idle);
          conn.idle = undefined;
        }
      },
      drain(ws) {
        ws.data.connection?.port.drain();
      },
      close(ws) {
        const conn = takeConnection(ws);
        if (!conn) return;
        clearTimeout(conn.idle);
        conn.keyless?.release();
        conn.session?.abort();
        conn.port.dispose();
      },
    },
  };
}

/** `/el/v1/text-to-speech/{voice_id}/stream-input` without a WebSocket upgrade. */
export function elevenLabsStreamInputRoute() {
  return new Elysia().get(PATH, () => elevenLabsError(new ApiError("websocket_upgrade_required", "connect with a WebSocket upgrade")));
}
