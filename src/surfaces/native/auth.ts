import type { AppContext } from "../../context.ts";
import { authPlugin, bearerKey } from "../auth-plugin.ts";

/** The native surface (and `/account`, `/v1/realtime`): the key is a Bearer token. */
export const nativeKey = bearerKey;
export const nativeAuth = (ctx: AppContext) => authPlugin(ctx, nativeKey);
