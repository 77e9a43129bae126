import type { WireJson } from "./wire-json.ts";
import { ProviderError } from "../errors.ts";
import type { TranscriptionRequest } from "./types.ts";

// HTTP to upstream providers: one place that turns what an upstream does wrong into
// ProviderErrors with the right retry verdict, and that notices an upstream that goes silent.
// Secrets never appear in the messages.

/** How an HTTP adapter reaches its upstream. */
export interface HttpProviderOptions {
  apiKey?: string;
  baseUrl: string;
  /** Bound on connect / first byte of each request. */
  connectTimeoutMs: number;
  /** Longest silence inside a response before the upstream is given up. */
  idleTimeoutMs: number;
  /** A streaming recognizer's socket that carried nothing for this long gets a keep-alive (default 4 s). */
  keepAliveMs?: number;
}

/** How often a quiet streaming recognizer socket gets a keep-alive: unless told, within every provider's known idle limit (Deepgram's 10 s). */
export const keepAliveEvery = (options: HttpProviderOptions) => options.keepAliveMs ?? 4000;

/** Whether a failure with this HTTP status may be retried on another provider. */
export function retryableStatus(status: number): boolean {
  return status === 401 || status === 403 || status === 408 || status === 429 || status >= 500;
}

/** A short, safe identifier: an error code, never free text (which may echo a request's key). */
export function safeErrorCode(value: unknown): string | undefined {
  return typeof value === "string" && /^[\w .:-]{1,64}$/.test(value) ? value : undefined;
}

/**
 * What an upstream's error body may tell a client: its error code, from the fields providers put
 * one in. The body itself is not passed on: free-text messages can echo part of our API key
 * (OpenAI's 401 does), and ProviderError messages reach clients.
 */
export function upstreamErrorCode(body: string): string | undefined {
  let json: WireJson | undefined;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  const error = json?.error;
  const candidates = [error?.code, error?.type, json?.error_code, json?.err_code, json?.detail?.status, json?.code, typeof error === "string" ? error : undefined];
  for (const candidate of candidates) {
    const code = safeErrorCode(candidate);
    if (code) return code;
  }
  return undefined;
}

/** A fetch whose failure is a ProviderError: refused/reset/timeout are retryable. */
export async function upstreamFetch(provider: string, url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  const controller = new AbortController();
  const outer = init.signal;
  outer?.addEventListener("abort", () => controller.abort(), { once: true });
  const timer = setTimeout(() => controller.abort(new ProviderError(`${provider} did not answer within ${timeoutMs} ms`, true)), timeoutMs);
  try {
    const res = await fetch(url, { ...init, signal: controller.signal });
    if (!res.ok) {
      const code = upstreamErrorCode(await res.text().catch(() => ""));
      throw new ProviderError(`${provider} answered ${res.status}${code ? ` (${code})` : ""}`, retryableStatus(res.status));
    }
    return res;
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    if (controller.signal.reason instanceof ProviderError) throw controller.signal.reason;
    if (outer?.aborted) throw new ProviderError(`${provider} request cancelled`, false);
    throw new ProviderError(`${provider} could not be reached: ${(err as Error).message}`, true);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The chunks of a response body, failing with a retryable ProviderError when the upstream sends
 * nothing for `idleMs` (a stalled or half-dead connection is never left hanging). One idle timer
 * per response, pushed back on every chunk: the per-chunk path allocates nothing.
 */
export async function* bodyChunks(provider: string, res: Response, idleMs: number, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  const reader = res.body!.getReader();
  let silent = false;
  // While the consumer holds a chunk (a slow client downstream), the upstream is not being read:
  // that wait is not the upstream's silence.
  let held = false;
  const timer = setTimeout(function expire() {
    if (held) return void timer.refresh();
    silent = true;
    reader.cancel().catch(() => {});
  }, idleMs);
  try {
    for (;;) {
      let step: Awaited<ReturnType<typeof reader.read>>;
      try {
        step = await reader.read();
      } catch (err) {
        if (signal?.aborted) return;
        throw new ProviderError(`${provider} dropped the connection: ${(err as Error).message}`, true);
      }
      if (silent) throw new ProviderError(`${provider} went silent for ${idleMs} ms`, true);
      if (step.done) return;
      timer.refresh();
      if (!step.value.byteLength) continue;
      held = true;
      yield step.value;
      held = false;
      timer.refresh();
    }
  } finally {
    clearTimeout(timer);
    reader.cancel().catch(() => {});
  }
}

/** A response body as JSON; anything else is a retryable ProviderError. */
export async function upstreamJson<T>(provider: string, res: Response): Promise<T> {
  try {
    return (await res.json()) as T;
  } catch {
    throw new ProviderError(`${provider} answered something that is not JSON`, true);
  }
}

/** The audio of a file transcription as a multipart `file` field, named after its container. */
export function setAudioFile(form: FormData, req: TranscriptionRequest): void {
  form.set("file", new Blob([req.bytes], req.mimeType ? { type: req.mimeType } : undefined), `audio.${req.container.toLowerCase().split(/[/ ]/)[0]}`);
}
