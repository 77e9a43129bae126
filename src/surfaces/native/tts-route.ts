import type { ServerWebSocket } from "bun";
import { Elysia } from "elysia";
import { ApiError } from "../../errors.ts";
import type { AppContext } from "../../context.ts";
import { TtsSession } from "../../sessions/tts-session.ts";
import { nativeError } from "../error-responses.ts";
import { WsPort } from "../ws-port.ts";
import { admitChannel, channelSession } from "../ws-admission.ts";
import { withLexicon } from "../pronunciation-locators.ts";
import { NATIVE_PROTOCOL, nativeSocketKey } from "./auth.ts";
import { answerProtocol } from "../ws-subprotocols.ts";
import { parseTtsFrame } from "./tts-frames.ts";
import { nativeTtsPort } from "./tts-wire.ts";
import { planTtsSession } from "./tts-query.ts";
import { jsonOf, takeFrames } from "../raw-frames.ts";
import { WsConnections } from "../ws-connections.ts";

interface Connection {
  session: TtsSession;
  port: WsPort;
}

/**
 * `/v1/tts`: the native streaming TTS channel. Query errors known before the upgrade answer HTTP
 * 400; auth and provider permission are checked after it and close with 4401 / 4403.
 */
export function ttsRoute(ctx: AppContext) {
  const connections = new WsConnections<Connection>();

  return new Elysia()
    .get("/v1/tts", () => nativeError(new ApiError("websocket_upgrade_required", "connect with a WebSocket upgrade")))
    .resolve(async ({ request }) => ({ admission: await admitChannel(ctx, nativeSocketKey(request), () => planTtsSession(ctx.catalogue, new URL(request.url).searchParams)) }))
    .ws("/v1/tts", {
      upgrade: ({ request, set }) => answerProtocol(request, set, NATIVE_PROTOCOL),
      open(ws) {
        const raw = ws.raw as ServerWebSocket<unknown>;
        const { admission } = ws.data;
        const { plan } = admission;
        const port = new WsPort(raw);
        const id = `tts_${crypto.randomUUID()}`;
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
          {
            provider: (id) => ctx.providers.get(id),
            ttsCache: ctx.ttsCache,
            port: nativeTtsPort(port),
            log: ctx.log,
            metrics: ctx.metrics,
            connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
            health: ctx.health,
            surface: "native",
          },
        );
        takeFrames(raw, (frame) => {
          const verdict = parseTtsFrame(typeof frame === "string" ? jsonOf(frame) : frame);
          if ("error" in verdict) session.reject(verdict.error, verdict.message);
          else session.command(verdict.command);
        });
        connections.set(ws, { session, port });
        ctx.sessions.add(session, "tts");
      },
      drain(ws) {
        connections.get(ws)?.port.drain();
      },
      close(ws) {
        const conn = connections.take(ws);
        conn?.session.abort();
        conn?.port.drain();
      },
    });
}
