import type { AppContext } from "../context.ts";

/** The server a request came in on, as far as its idle timeout goes (Elysia's handler context has it). */
export interface RequestTimeouts {
  timeout(request: Request, seconds: number): void;
}

/**
 * A streamed answer's client may read nothing of it for HTTP_STALL_TIMEOUT_S: an audio element
 * whose buffer is full stops reading while it plays, and a client that stops reading only slows
 * the answer to its pace (tts-websocket.md#flow-control). Bun's idle timeout (10 s) closed such
 * an answer mid-body as soon as the socket had been quiet that long.
 */
export function allowStalledReader(ctx: AppContext, server: RequestTimeouts | null, request: Request): void {
  server?.timeout(request, ctx.config.httpStallTimeoutS);
}
