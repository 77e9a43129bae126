import { Elysia } from "elysia";
import { ApiError } from "../../errors.ts";
import type { AppContext } from "../../context.ts";
import { TtsSession } from "../../sessions/tts-session.ts";
import { nativeError } from "../error-responses.ts";
import { admitChannel, channelSession, type SocketAdmission } from "../ws-admission.ts";
import { withLexicon } from "../pronunciation-locators.ts";
import { ttsSessionDeps } from "../tts-session-deps.ts";
import { NATIVE_PROTOCOL, nativeSocketKey } from "./auth.ts";
import { parseTtsFrame } from "./tts-frames.ts";
import { NativeTtsPort } from "./tts-wire.ts";
import { type NativeTtsPlan, plannedTtsSession } from "./tts-query.ts";
import { jsonOf } from "../raw-frames.ts";
import { keepConnection, type SocketData, takeConnection } from "../ws-connections.ts";
import type { SocketRoute } from "../socket-routes.ts";
import { recordId } from "../../util/record-id.ts";

interface Connection {
  session: TtsSession;
  port: NativeTtsPort;
}

type TtsSocket = SocketData<Connection> & { admission: SocketAdmission<NativeTtsPlan> };

/** A URL's query as sent, `?` included ("" for none). */
const searchOf = (url: string) => {
  const at = url.indexOf("?");
  return at < 0 ? "" : url.slice(at);
};

/** `/v1/tts` without a WebSocket upgrade. */
export function ttsRoute() {
  return new Elysia().get("/v1/tts", () => nativeError(new ApiError("websocket_upgrade_required", "connect with a WebSocket upgrade")));
}

/**
 * `/v1/tts`: the native streaming TTS channel. Query errors known before the upgrade answer HTTP
 * 400; auth and provider permission are checked after it and close with 4401 / 4403.
 */
export function ttsSocket(ctx: AppContext): SocketRoute<TtsSocket> {
  return {
    path: "/v1/tts",
    protocol: NATIVE_PROTOCOL,
    admit: async (request, query) => ({ admission: await admitChannel(ctx, nativeSocketKey(request), () => plannedTtsSession(ctx.catalogue, searchOf(request.url), query)) }),
    socket: {
      open(ws) {
        const { admission } = ws.data;
        const { plan } = admission;
        const port = new NativeTtsPort(ws);
        const id = recordId("tts");
        const session = new TtsSession(
          {
            id,
            voice: plan?.voice,
            format: plan?.format ?? "pcm",
            autoFlush: plan?.autoFlush ?? true,
            alignment: plan?.alignment,
            cache: plan?.cache,
            speed: plan?.speed,
            options: plan?.options ?? {},
            admit: () => withLexicon(ctx, () => channelSession(ctx, id, admission, "native"), admission.payer, plan?.pronunciation),
            idleTimeoutMs: ctx.config.sessionLimits.ttsIdleTimeoutMs,
          },
          ttsSessionDeps(ctx, port, "native"),
        );
        keepConnection(ws, { session, port });
        ctx.sessions.add(session, "tts");
      },
      message(ws, frame) {
        const session = ws.data.connection?.session;
        if (!session) return;
        const verdict = parseTtsFrame(typeof frame === "string" ? jsonOf(frame) : frame);
        if ("error" in verdict) session.reject(verdict.error, verdict.message);
        else session.command(verdict.command);
      },
      drain(ws) {
        ws.data.connection?.port.drain();
      },
      close(ws) {
        const conn = takeConnection(ws);
        conn?.session.abort();
        conn?.port.drain();
      },
    },
  };
}
