import type { AppContext } from "../context.ts";
import { elevenLabsConversationSocket } from "./el/conversation-route.ts";
import { elevenLabsStreamInputSocket } from "./el/stream-input-route.ts";
import { realtimeSocket } from "./native/realtime-route.ts";
import { sttSocket } from "./native/stt-route.ts";
import { ttsSocket } from "./native/tts-route.ts";
import { oaiRealtimeSocket } from "./oai/realtime-route.ts";
import type { SocketRoute } from "./socket-routes.ts";
import { telephonyMediaSockets } from "./telephony/media-route.ts";

/** Every WebSocket channel of the three surfaces (served ahead of the app: socket-routes.ts). */
// biome-ignore lint/suspicious/noExplicitAny: each route has its own socket data
export function sockets(ctx: AppContext): SocketRoute<any>[] {
  return [ttsSocket(ctx), sttSocket(ctx), realtimeSocket(ctx), oaiRealtimeSocket(ctx), elevenLabsStreamInputSocket(ctx), elevenLabsConversationSocket(ctx), ...telephonyMediaSockets(ctx)];
}
