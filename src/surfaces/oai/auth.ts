import type { AppContext } from "../../context.ts";
import { authPlugin, bearerKey } from "../auth-plugin.ts";

/** `/oai`: the key is a Bearer token, as the OpenAI SDK sends it. */
export const oaiKey = bearerKey;
export const oaiAuth = (ctx: AppContext) => authPlugin(ctx, oaiKey);
