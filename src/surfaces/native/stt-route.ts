import type { ServerWebSocket } from "bun";
import { Elysia } from "elysia";
import { DEFAULT_VAD } from "../../audio/vad.ts";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { SttPassthrough } from "../../sessions/stt-passthrough.ts";
import type { SttCommand, SttSessionParams } from "../../sessions/stt-events.ts";
import { SttSession } from "../../sessions/stt-session.ts";
import { nativeError } from "../error-responses.ts";
import { admitChannel, channelSession } from "../ws-admission.ts";
import { NATIVE_PROTOCOL, nativeSocketKey } from "./auth.ts";
import { answerProtocol } from "../ws-subprotocols.ts";
import { nativeSttParam, readSttQuery, type SttFields } from "../../planning/stt-fields.ts";
import { planWithNames } from "../../planning/members.ts";
import { planStt } from "../../planning/plan-stt.ts";
import type { SttPlan } from "../../planning/stt-request.ts";
import type { SttProvider } from "../../providers/types.ts";
import type { Catalogue } from "../../catalogue/catalogue.ts";
import { nativeSttPort } from "./stt-wire.ts";
import { WsConnections } from "../ws-connections.ts";
import { jsonOf, takeFrames } from "../raw-frames.ts";
import { TurnCorkedSender } from "../turn-corked-sender.ts";

const UNPLANNED: SttSessionParams = {
  families: new Map(),
  audioFormat: "pcm_16000",
  sampleRate: 16000,
  channels: 1,
  bytesPerSecond: 32000,
  commitStrategy: "auto",
  turnDetection: "auto",
  vad: DEFAULT_VAD,
  portable: {},
  options: {},
};

const COMMANDS: Record<string, SttCommand["type"]> = { "stt.audio.commit": "commit", "stt.audio.clear": "clear", "stt.session.close": "close" };

/** `/v1/stt`: the native streaming STT channel (see docs/stt-websocket.md). */
export function sttRoute(ctx: AppContext) {
  const sessions = new WsConnections<{ abort(): void }>();

  return new Elysia()
    .get("/v1/stt", () => nativeError(new ApiError("websocket_upgrade_required", "connect with a WebSocket upgrade")))
    .resolve(async ({ request }) => ({
      admission: await admitChannel(
        ctx,
        nativeSocketKey(request),
        () => planSttSession(ctx.catalogue, (id) => ctx.sttProviders.get(id), new URL(request.url).searchParams),
        (candidate) => ctx.sttProviders.get(candidate.provider.id)?.overloaded?.(),
      ),
    }))
    .ws("/v1/stt", {
      upgrade: ({ request, set }) => answerProtocol(request, set, NATIVE_PROTOCOL),
      open(ws) {
        const raw = ws.raw as ServerWebSocket<unknown>;
        const { admission } = ws.data;
        const p = admission.plan;
        const id = `stt_${crypto.randomUUID()}`;
        const admit = () => channelSession(ctx, id, admission, "native");
        if (p?.eventFormat === "provider") {
          const toClient = new TurnCorkedSender(raw);
          const relay = new SttPassthrough(
            {
              id,
              request: {
                audioFormat: p.audioFormat,
                channels: p.channels,
                language: p.language,
                interim: p.interim ?? true,
                commitStrategy: p.commitStrategy,
                turnDetection: p.turnDetection,
                portable: p.portable,
                options: p.options,
              },
              bytesPerSecond: p.bytesPerSecond,
              admit,
              idleTimeoutMs: ctx.config.sessionLimits.sttIdleTimeoutMs,
            },
            {
              provider: (pid) => ctx.sttProviders.get(pid),
              port: toClient,
              log: ctx.log,
              metrics: ctx.metrics,
              connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
              health: ctx.health,
              surface: "native",
            },
          );
          // Frames must reach the relay as they came: taken before Elysia parses JSON text.
          takeFrames(raw, (frame) => relay.frame(frame));
          sessions.set(ws, relay);
          ctx.sessions.add(relay, "stt");
          return;
        }
        // Without a plan (a bad query) the session only reports the error: the settings do not matter.
        const session = new SttSession(
          { ...(p ?? UNPLANNED), id, admit, idleTimeoutMs: ctx.config.sessionLimits.sttIdleTimeoutMs },
          {
            provider: (pid) => ctx.sttProviders.get(pid),
            port: nativeSttPort(raw, id),
            log: ctx.log,
            metrics: ctx.metrics,
            connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
            health: ctx.health,
            surface: "native",
            vadLanes: ctx.vadLanes,
          },
        );
        takeFrames(raw, (frame) => {
          if (typeof frame !== "string") return session.audio(frame);
          const type = (jsonOf(frame) as { type?: unknown } | null | undefined)?.type;
          const command = typeof type === "string" ? COMMANDS[type] : undefined;
          if (command) session.command({ type: command });
          else session.reject("text frames are JSON objects with type stt.audio.commit, stt.audio.clear or stt.session.close");
        });
        sessions.set(ws, session);
        ctx.sessions.add(session, "stt");
      },
      close(ws) {
        sessions.take(ws)?.abort();
      },
    });
}

/** Reads the query and plans it; a refusal names the query's parameter. */
export function planSttSession(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, fields: SttFields): SttPlan {
  const request = readSttQuery(fields);
  return planWithNames(() => planStt(catalogue, sttProvider, request), nativeSttParam);
}
