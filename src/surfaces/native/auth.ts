import type { AppContext } from "../../context.ts";
import { authPlugin, bearerKey, type KeyReader } from "../auth-plugin.ts";
import { keyInProtocols, NATIVE_KEY_PROTOCOL } from "../ws-subprotocols.ts";

/** The native surface (and `/account`, `/v1/realtime`): the key is a Bearer token. */
export const nativeKey = bearerKey;
export const nativeAuth = (ctx: AppContext) => authPlugin(ctx, nativeKey);

/** What the native WebSocket channels answer a browser that offers it with its key (docs/tts-websocket.md#connecting). */
export const NATIVE_PROTOCOL = "voxroute";

/** The native WebSocket channels also take the key as the subprotocol `voxroute-key.<key>`, for browsers; the header wins. */
export const nativeSocketKey: KeyReader = (request) => bearerKey(request) ?? keyInProtocols(request, [NATIVE_KEY_PROTOCOL]);
