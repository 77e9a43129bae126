import type { AppContext } from "../../context.ts";
import { authPlugin, bearerKey, type KeyReader } from "../auth-plugin.ts";

/**
 * The key of an `/el` request: `xi-api-key`, or a Bearer token. The stream-input socket also
 * reads its query and init frame (stream-input-route.ts).
 */
export const elevenLabsKey: KeyReader = (request) => request.headers.get("xi-api-key")?.trim() || bearerKey(request);
export const elAuth = (ctx: AppContext) => authPlugin(ctx, elevenLabsKey);
