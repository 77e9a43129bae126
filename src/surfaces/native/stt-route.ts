import { Elysia } from "elysia";
import { DEFAULT_VAD } from "../../audio/vad.ts";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { SttPassthrough } from "../../sessions/stt-passthrough.ts";
import type { SttCommand, SttSessionParams } from "../../sessions/stt-events.ts";
import { SttSession } from "../../sessions/stt-session.ts";
import { nativeError } from "../error-responses.ts";
import { admitChannel, channelSession, type SocketAdmission } from "../ws-admission.ts";
import { NATIVE_PROTOCOL, nativeSocketKey } from "./auth.ts";
import { nativeSttParam, readSttQuery, type SttFields } from "../../planning/stt-fields.ts";
import { planWithNames } from "../../planning/members.ts";
import { planStt } from "../../planning/plan-stt.ts";
import type { SttPlan } from "../../planning/stt-request.ts";
import type { SttProvider } from "../../providers/stt-types.ts";
import type { Catalogue } from "../../catalogue/catalogue.ts";
import { nativeSttPort } from "./stt-wire.ts";
import { keepConnection, type SocketData, takeConnection } from "../ws-connections.ts";
import { jsonOf } from "../raw-frames.ts";
import type { SocketRoute } from "../socket-routes.ts";
import { TurnCorkedSender } from "../turn-corked-sender.ts";
import { recordId } from "../../util/record-id.ts";

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

type SttSocket = SocketData<{ abort(): void; frame(frame: string | Uint8Array): void }> & { admission: SocketAdmission<SttPlan> };

/** `/v1/stt` without a WebSocket upgrade. */
export function sttRoute() {
  return new Elysia().get("/v1/stt", () => nativeError(new ApiError("websocket_upgrade_required", "connect with a WebSocket upgrade")));
}

/** A normalized session's client frames: binary audio, or one of its commands. */
class SttFrames {
  constructor(readonly session: SttSession) {}

  frame(frame: string | Uint8Array): void {
    if (typeof frame !== "string") return this.session.audio(frame);
    const type = (jsonOf(frame) as { type?: unknown } | null | undefined)?.type;
    const command = typeof type === "string" ? COMMANDS[type] : undefined;
    if (command) this.session.command({ type: command });
    else this.session.reject("text frames are JSON objects with type stt.audio.commit, stt.audio.clear or stt.session.close");
  }

  abort(): void {
    this.session.abort();
  }
}

/** `/v1/stt`: the native streaming STT channel (see docs/stt-websocket.md). */
export function sttSocket(ctx: AppContext): SocketRoute<SttSocket> {
  const provider = (pid: string) => ctx.sttProviders.get(pid);
  return {
    path: "/v1/stt",
    protocol: NATIVE_PROTOCOL,
    admit: async (request, query) => ({
      admission: await admitChannel(
        ctx,
        nativeSocketKey(request),
        () => planSttSession(ctx.catalogue, provider, query),
        (candidate) => ctx.sttProviders.get(candidate.provider.id)?.overloaded?.(),
      ),
    }),
    socket: {
      open(raw) {
        const { admission } = raw.data;
        const p = admission.plan;
        const id = recordId("stt");
        const admit = () => channelSession(ctx, id, admission, "native");
        if (p?.eventFormat === "provider") {
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
              provider,
              port: new TurnCorkedSender(raw),
              log: ctx.log,
              metrics: ctx.metrics,
              connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
              health: ctx.health,
              surface: "native",
            },
          );
          // Frames reach the relay as they came.
          keepConnection(raw, relay);
          ctx.sessions.add(relay, "stt");
          return;
        }
        // Without a plan (a bad query) the session only reports the error: the settings do not matter.
        const session = new SttSession(
          { ...(p ?? UNPLANNED), id, admit, idleTimeoutMs: ctx.config.sessionLimits.sttIdleTimeoutMs },
          {
            provider,
            port: nativeSttPort(raw, id),
            log: ctx.log,
            metrics: ctx.metrics,
            connectTimeoutMs: ctx.config.providerConnectTimeoutMs,
            health: ctx.health,
            surface: "native",
            vadLanes: ctx.vadLanes,
          },
        );
        keepConnection(raw, new SttFrames(session));
        ctx.sessions.add(session, "stt");
      },
      message(ws, frame) {
        ws.data.connection?.frame(frame);
      },
      close(ws) {
        takeConnection(ws)?.abort();
      },
    },
  };
}

/** Reads the query and plans it; a refusal names the query's parameter. */
export function planSttSession(catalogue: Catalogue, sttProvider: (id: string) => SttProvider | undefined, fields: SttFields): SttPlan {
  const request = readSttQuery(fields);
  return planWithNames(() => planStt(catalogue, sttProvider, request), nativeSttParam);
}
