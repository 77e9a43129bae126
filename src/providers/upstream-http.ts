import type { WireJson } from "./wire-json.ts";
import { ProviderError } from "../errors.ts";
import type { TranscriptionRequest } from "./stt-types.ts";
import { activeSpan } from "../tracing/spans.ts";

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

/** The request's headers, with the provider attempt's `traceparent` when tracing is on. */
function traced(headers: RequestInit["headers"]): RequestInit["headers"] {
  const span = activeSpan();
  if (!span) return headers;
  const withParent = new Headers(headers);
  withParent.set("traceparent", span.traceparent());
  return withParent;
}

/**
 * A fetch whose failure is a ProviderError: refused/reset/timeout are retryable. The connect
 * timeout aborts a signal of its own, joined to the caller's (`init.signal`); or, given `own` (a
 * controller that is this request's alone: its caller aborts it only to cancel the request), it
 * aborts that one, and no second signal is made and joined for the request.
 */
export async function upstreamFetch(provider: string, url: string, init: RequestInit, timeoutMs: number, own?: AbortController): Promise<Response> {
  const timeout = own ?? new AbortController();
  const outer = own ? undefined : init.signal;
  // Not a listener on the outer signal: a session's signal outlives many requests, and each would leave one behind.
  const signal = own ? own.signal : outer ? AbortSignal.any([outer, timeout.signal]) : timeout.signal;
  const timer = setTimeout(() => timeout.abort(new ProviderError(`${provider} did not answer within ${timeoutMs} ms`, true)), timeoutMs);
  try {
    const res = await fetch(url, { ...init, headers: traced(init.headers), signal });
    if (!res.ok) {
      const code = upstreamErrorCode(await res.text().catch(() => ""));
      throw new ProviderError(`${provider} answered ${res.status}${code ? ` (${code})` : ""}`, retryableStatus(res.status));
    }
    return res;
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    if (timeout.signal.reason instanceof ProviderError) throw timeout.signal.reason;
    if (signal.aborted) throw new ProviderError(`${provider} request cancelled`, false);
    throw new ProviderError(`${provider} could not be reached: ${(err as Error).message}`, true);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A response body read chunk by chunk with its reader, failing with a retryable ProviderError
 * when the upstream sends nothing for `idleMs` (a stalled or half-dead connection is never left
 * hanging). One idle timer per response, pushed back on every read: a chunk costs its read and
 * nothing else (no generator steps, no closures). Read with Bun's `readMany`, which hands over every
 * chunk already buffered at once, without a promise: under load the chunks of one response wait
 * together, and each read one at a time cost a promise and a turn of the microtask queue.
 */
type BodyStreamReader = Pick<ReadableStreamDefaultReader<Uint8Array>, "readMany" | "cancel">;

export class BodyReader {
  private readonly reader: BodyStreamReader;
  private readonly timer: Timer;
  private silent = false;
  private done = false;
  /** Chunks read and not yet handed on, from `at`. */
  private chunks: Uint8Array[] = [];
  private at = 0;
  /**
   * Between two reads the consumer holds a chunk (a slow client downstream): the upstream is not
   * being read, and that wait is not its silence.
   */
  private held = false;

  constructor(
    private readonly provider: string,
    res: Response,
    private readonly idleMs: number,
    private readonly signal?: AbortSignal,
  ) {
    this.reader = res.body!.getReader() as unknown as BodyStreamReader; // Bun's reader; the DOM's type lacks readMany
    this.timer = setTimeout(() => this.expire(), idleMs);
  }

  /** The next chunk; undefined at the body's end (or once the request was cancelled). */
  async next(): Promise<Uint8Array | undefined> {
    for (;;) {
      const chunk = this.buffered();
      if (chunk) return chunk;
      if (this.done) return undefined;
      let step: Bun.ReadableStreamDefaultReadManyResult<Uint8Array>;
      try {
        const read = this.reader.readMany();
        step = read instanceof Promise ? await read : read;
      } catch (err) {
        if (this.signal?.aborted) return undefined;
        throw new ProviderError(`${this.provider} dropped the connection: ${(err as Error).message}`, true);
      }
      if (this.silent) throw new ProviderError(`${this.provider} went silent for ${this.idleMs} ms`, true);
      this.timer.refresh();
      this.chunks = step.value;
      this.at = 0;
      this.done = step.done;
    }
  }

  /** The next chunk already read, with no promise; undefined when the next is still to be read (`next`). */
  buffered(): Uint8Array | undefined {
    if (this.held) {
      this.held = false;
      this.timer.refresh();
    }
    while (this.at < this.chunks.length) {
      const chunk = this.chunks[this.at++]!;
      if (!chunk.byteLength) continue;
      this.held = true;
      return chunk;
    }
    return undefined;
  }

  /** Stops the timer, and the body when it was not read to its end. */
  release(): void {
    clearTimeout(this.timer);
    if (!this.done) this.reader.cancel().catch(() => {});
  }

  private expire(): void {
    if (this.held) return void this.timer.refresh();
    this.silent = true;
    this.reader.cancel().catch(() => {});
  }
}

/** The chunks of a response body as an async iterable (see `BodyReader`). */
export async function* bodyChunks(provider: string, res: Response, idleMs: number, signal?: AbortSignal): AsyncGenerator<Uint8Array> {
  const body = new BodyReader(provider, res, idleMs, signal);
  try {
    for (let chunk = await body.next(); chunk; chunk = await body.next()) yield chunk;
  } finally {
    body.release();
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
