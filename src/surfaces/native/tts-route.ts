import type { ServerWebSocket } from "bun";
import { Elysia } from "elysia";
import { authenticate, bearerToken } from "../../accounts/keys.ts";
import { ApiError, nativeEnvelope } from "../../errors.ts";
import type { AppContext } from "../../context.ts";
import { TtsSession } from "../../sessions/tts-session.ts";
import { WsPort } from "../ws-port.ts";
import { parseTtsFrame } from "./tts-frames.ts";
import { planTtsSession } from "./tts-query.ts";

interface Connection {
  session: TtsSession;
  port: WsPort;
}

const queryOf = (url: string) => new URL(url).searchParams;

/**
 * `/v1/tts`: the native streaming TTS channel. Query errors known before the upgrade answer HTTP
 * 400; auth and provider permission are checked after it and close with 4401 / 4403.
 */
export function ttsRoute(ctx: AppContext) {
  const connections = new WeakMap<ServerWebSocket<unknown>, Connection>();

  return new Elysia()
    .get("/v1/tts", ({ status }) =>
      status(426, nativeEnvelope(new ApiError("websocket_upgrade_required", "connect with a WebSocket upgrade"))),
    )
    .ws("/v1/tts", {
      // Runs before the upgrade, possibly twice: read-only checks only (no holds, no debits).
      async beforeHandle({ request, status }) {
        let plan: ReturnType<typeof planTtsSession>;
        try {
          plan = planTtsSession(ctx.catalogue, queryOf(request.url));
        } catch (err) {
          if (err instanceof ApiError && err.status === 400) return status(400, nativeEnvelope(err));
          return; // 403s are told after the upgrade, as close code 4403, once the key is known.
        }
        // A known key that cannot pay learns it before the upgrade: 402, or 422 for an unpriced model.
        const principal = await authenticate(ctx.database, bearerToken(request.headers.get("authorization"))).catch(() => undefined);
        if (!principal) return; // 401/403 close the socket after the upgrade
        try {
          await ctx.meter.admit(principal, plan.candidates);
        } catch (err) {
          if (err instanceof ApiError) return status(err.status, nativeEnvelope(err));
          throw err;
        }
      },
      open(ws) {
        const raw = ws.raw as ServerWebSocket<unknown>;
        const request = ws.data.request;
        const port = new WsPort(raw);
        let plan: ReturnType<typeof planTtsSession> | undefined;
        let planError: unknown;
        try {
          plan = planTtsSession(ctx.catalogue, queryOf(request.url));
        } catch (err) {
          planError = err;
        }
        const id = `tts_${crypto.randomUUID()}`;
        const session = new TtsSession(
          {
            id,
            voice: plan?.voice,
            format: plan?.format ?? "pcm",
            autoFlush: plan?.autoFlush ?? true,
            options: plan?.options ?? {},
            admit: async () => {
              const principal = await authenticate(ctx.database, bearerToken(request.headers.get("authorization")));
              if (!plan) throw planError;
              const candidates = await ctx.meter.admit(principal, plan.candidates);
              return { candidates, meter: ctx.meter.start(id, principal, "native") };
            },
          },
          { provider: (id) => ctx.providers.get(id), port, log: ctx.log, metrics: ctx.metrics, connectTimeoutMs: ctx.config.providerConnectTimeoutMs, surface: "native" },
        );
        connections.set(raw, { session, port });
        ctx.sessions.add(session, "tts");
      },
      message(ws, message) {
        const conn = connections.get(ws.raw as ServerWebSocket<unknown>);
        if (!conn) return;
        const verdict = parseTtsFrame(message);
        if ("error" in verdict) conn.session.reject(verdict.error, verdict.message);
        else conn.session.command(verdict.command);
      },
      drain(ws) {
        connections.get(ws.raw as ServerWebSocket<unknown>)?.port.drain();
      },
      close(ws) {
        const raw = ws.raw as ServerWebSocket<unknown>;
        const conn = connections.get(raw);
        connections.delete(raw);
        conn?.session.abort();
        conn?.port.drain();
      },
    });
}
