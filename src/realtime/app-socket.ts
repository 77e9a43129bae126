import { CLOSE } from "../errors.ts";
import type { AppMessage, AppWire } from "./app-messages.ts";
import { type Resolver, resolveUpstream, UpstreamRefused } from "./upstream-guard.ts";
import { withTraceparent } from "../tracing/spans.ts";

// The router's end of the application socket. It connects to the profile's application URL
// through the SSRF guard (the checked address pinned, the original Host and TLS name kept), with
// the profile's headers, and speaks the profile's protocol (`AppWire`: ConversationRelay, or
// ElevenLabs' Speech Engine). It hands the application's messages on typed, answers each one it
// cannot take with `error` (closing 1008 after MAX_INVALID_IN_A_ROW in a row, as Telnyx does),
// notices an application that does not answer a finished prompt in time, and, where the protocol
// has pings, one that stops answering them.

/** Invalid messages in a row after which the application is closed (1008). */
export const MAX_INVALID_IN_A_ROW = 10;

/** What the session hears from the application. */
export type AppSignal =
  | AppMessage
  /** The application closed the socket (or was closed for breaking the vocabulary). */
  | { type: "closed"; code: number; reason: string }
  /** No `text` or `end` came within the reply timeout after a finished prompt. */
  | { type: "silent"; afterMs: number };

/** The close code and reason an application that stopped answering pings is closed with. */
export const NO_PONG = { code: 1011, reason: "the application did not answer a ping" } as const;

/** The application could not be reached, refused the connection, or took too long: the message names it. */
export class AppUnavailable extends Error {}

export interface AppTarget {
  url: string;
  headers?: Record<string, string>;
}

export interface AppSocketOptions {
  allowPrivate: boolean;
  connectTimeoutMs: number;
  /** How long the application may take to start answering a finished prompt; 0 for no limit. */
  replyTimeoutMs: number;
  resolve?: Resolver;
  /** Extra trust for TLS (a test's own certificate authority). */
  ca?: string;
  /** How often the application is pinged, where the protocol pings; 0 for never. */
  pingIntervalMs?: number;
}

export class AppSocket {
  private invalidInARow = 0;
  private replyTimer: Timer | undefined;
  private pinger: Timer | undefined;
  private awaitingPong = false;
  private closed = false;

  private constructor(
    private readonly ws: WebSocket,
    private readonly wire: AppWire,
    private readonly onSignal: (signal: AppSignal) => void,
    private readonly replyTimeoutMs: number,
  ) {
    ws.onmessage = (e) => this.read(e.data as string | ArrayBuffer);
    ws.onclose = (e) => {
      if (this.closed) return;
      this.stopTimers();
      onSignal({ type: "closed", code: e.code, reason: e.reason });
    };
  }

  /** Connects, says the protocol's first words, and from then on hands every signal to `onSignal`. Throws `AppUnavailable`. */
  static async open(target: AppTarget, wire: AppWire, options: AppSocketOptions, onSignal: (signal: AppSignal) => void): Promise<AppSocket> {
    const name = appName(target.url);
    let resolved: Awaited<ReturnType<typeof resolveUpstream>>;
    try {
      resolved = await resolveUpstream(target.url, options.allowPrivate, options.resolve);
    } catch (err) {
      throw new AppUnavailable(err instanceof UpstreamRefused ? err.message : `the application at ${name} cannot be reached`);
    }
    const ws = await connect(resolved.connectUrl, name, options.connectTimeoutMs, {
      headers: withTraceparent({ ...target.headers, Host: resolved.host }),
      tls: { ...(resolved.servername ? { servername: resolved.servername } : {}), ...(options.ca ? { ca: options.ca } : {}) },
    });
    const socket = new AppSocket(ws, wire, onSignal, options.replyTimeoutMs);
    socket.send(wire.hello());
    if (wire.ping && options.pingIntervalMs) socket.pinger = setInterval(() => socket.ping(), options.pingIntervalMs);
    return socket;
  }

  /** What the caller said: a partial (`last: false`) or the finished turn, which the application must answer. */
  prompt(voicePrompt: string, last: boolean, lang?: string): void {
    this.send(this.wire.prompt(voicePrompt, last, lang));
    if (last && this.replyTimeoutMs > 0) {
      clearTimeout(this.replyTimer);
      const afterMs = this.replyTimeoutMs;
      this.replyTimer = setTimeout(() => !this.closed && this.onSignal({ type: "silent", afterMs }), afterMs);
    }
  }

  /** The caller talked over the agent: what of the response was spoken, and for how long. */
  interrupt(utteranceUntilInterrupt: string, durationUntilInterruptMs: number): void {
    this.send(this.wire.interrupt(utteranceUntilInterrupt, durationUntilInterruptMs));
  }

  /** The caller pressed a key; said where the protocol tells keys. */
  dtmf(digit: string): void {
    if (this.wire.dtmf) this.send(this.wire.dtmf(digit));
  }

  /** A valid message the router cannot carry out here: the application hears why. */
  refuse(description: string): void {
    this.send(this.wire.refuse(description));
  }

  close(code: number = CLOSE.normal, reason = ""): void {
    if (this.closed) return;
    if (code === CLOSE.normal) this.send(this.wire.farewell());
    this.stopTimers();
    this.ws.close(code, reason);
  }

  private stopTimers(): void {
    this.closed = true;
    clearTimeout(this.replyTimer);
    clearInterval(this.pinger);
  }

  /** A ping; the previous one still unanswered, the application is taken as gone. */
  private ping(): void {
    if (this.awaitingPong) {
      this.close(NO_PONG.code, NO_PONG.reason);
      return this.onSignal({ type: "closed", ...NO_PONG });
    }
    this.awaitingPong = true;
    this.send([this.wire.ping!()]);
  }

  private send(frames: object[]): void {
    for (const msg of frames) if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(msg));
  }

  private read(frame: string | ArrayBuffer): void {
    if (this.closed) return;
    const msg = this.wire.read(typeof frame === "string" ? frame : new Uint8Array(frame));
    if ("pong" in msg) return void (this.awaitingPong = false);
    if ("stale" in msg) return;
    if ("invalid" in msg) {
      this.send(this.wire.refuse(msg.invalid));
      if (++this.invalidInARow >= MAX_INVALID_IN_A_ROW) {
        this.close(CLOSE.policyViolation, "too many invalid messages");
        this.onSignal({ type: "closed", code: CLOSE.policyViolation, reason: "too many invalid messages" });
      }
      return;
    }
    this.invalidInARow = 0;
    if (msg.type === "text" || msg.type === "end") clearTimeout(this.replyTimer);
    this.onSignal(msg);
  }
}

/** The application as messages name it: its host, never a resolved address or a query. */
function appName(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return "the profile's URL";
  }
}

function connect(url: string, name: string, timeoutMs: number, init: { headers: Record<string, string>; tls: Record<string, string> }): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, init as never);
    const timer = setTimeout(() => {
      ws.onopen = ws.onerror = ws.onclose = null;
      ws.close();
      reject(new AppUnavailable(`the application at ${name} did not accept the connection within ${timeoutMs} ms`));
    }, timeoutMs);
    ws.onopen = () => {
      clearTimeout(timer);
      ws.onopen = ws.onerror = ws.onclose = null;
      resolve(ws);
    };
    ws.onerror = ws.onclose = () => {
      clearTimeout(timer);
      ws.onopen = ws.onerror = ws.onclose = null;
      reject(new AppUnavailable(`the application at ${name} refused the connection`));
    };
  });
}
