import type { SttPort, SttSessionEvent } from "../../sessions/stt-events.ts";

// The conversation's ear: the STT session that hears the caller, replaced by a new one when the
// application switches the transcription language, or the client asks to commit turns itself
// (an STT stream's language and commit strategy are fixed when it opens). The old session keeps hearing until the new one has started, so a language no provider
// takes leaves the conversation as it was; then the old one finishes the turn it was in. Turn ids
// stay unique across sessions (each session's turns are numbered after the last one's); the
// usage is the sum of them all. A session whose provider fails moves to the next itself
// (sessions/stt-failover.ts): it goes on hearing, its turns numbered on, and tells `switched`.

/** An STT session as the conversation uses it. */
export interface SttHandle {
  audio(frame: Uint8Array): void;
  command(cmd: { type: "commit" | "clear" | "close" }): void;
  abort(): void;
}

/** What a conversation may change of how its caller is heard; absent members are the profile's. */
export interface HearingSettings {
  language?: string;
  /** Turns end only when the client commits them (OpenAI's `turn_detection: null`). */
  manualCommits?: boolean;
}

/** Opens an STT session with `settings` over the profile's; throws `ApiError` when no candidate can. */
export type OpenStt = (port: SttPort, settings: HearingSettings) => SttHandle;

export interface HearingListener {
  event(event: SttSessionEvent): void;
  /** The serving session closed (a replaced one's close is its own business). */
  closed(code: number, reason: string): void;
}

export class Hearing {
  private current: SttHandle;
  private readonly replaced = new Set<SttHandle>();
  /** Sessions for a new language that have not started yet. */
  private readonly trying = new Set<SttHandle>();
  /** The highest conversation turn number any session has used. */
  private lastTurn = 0;
  private opened = 0;
  /** Seconds billed by the sessions that have ended. */
  seconds = 0;
  private allClosed: (() => void) | undefined;
  private settings: HearingSettings = {};

  constructor(
    private readonly open: OpenStt,
    private readonly listener: HearingListener,
    /** The profile's language, when it names one. */
    private readonly profileLanguage?: string,
  ) {
    this.current = this.start(this.settings);
  }

  /** The language the caller is heard in, when known. */
  get language(): string | undefined {
    return this.settings.language ?? this.profileLanguage;
  }

  audio(frame: Uint8Array): void {
    this.current.audio(frame);
  }

  command(cmd: { type: "commit" | "clear" | "close" }): void {
    this.current.command(cmd);
  }

  /** Resolves once the sessions replaced have closed too: then `seconds` is the whole usage. */
  replacedClosed(): Promise<void> {
    if (!this.replaced.size) return Promise.resolve();
    return new Promise((resolve) => (this.allClosed = resolve));
  }

  abort(): void {
    for (const session of [this.current, ...this.replaced]) session.abort();
    this.stopTrying();
  }

  /** The conversation is over: a language switch under way is given up. */
  stopTrying(): void {
    for (const session of this.trying) session.abort();
    this.trying.clear();
  }

  /**
   * Hears the caller with `change` applied once a session for it has started; until then the
   * current one goes on. Rejects (and nothing changes) when the profile's recognizers cannot.
   */
  switchTo(change: HearingSettings): Promise<void> {
    const settings = { ...this.settings, ...change };
    return new Promise((resolve, reject) => {
      let failure = "the recognizer could not start";
      const next = this.start(settings, {
        started: () => {
          this.trying.delete(next);
          const old = this.current;
          this.current = next;
          this.settings = settings;
          this.replaced.add(old);
          old.command({ type: "close" });
          resolve();
        },
        failed: (message) => (failure = message),
        closed: () => {
          this.trying.delete(next);
          reject(new Error(failure));
        },
      });
      this.trying.add(next);
    });
  }

  private start(settings: HearingSettings, trial?: { started(): void; failed(message: string): void; closed(): void }): SttHandle {
    // A later session's turns come after every turn used so far, with one number left for the
    // turn the replaced session was in (its final may still come).
    const base = this.opened++ === 0 ? 0 : this.lastTurn + 1;
    const session: SttHandle = this.open(
      {
        event: (ev) => {
          if (ev.type === "ended") return void (this.seconds += ev.billedSeconds);
          if (this.trying.has(session)) {
            if (ev.type === "started") trial?.started();
            else if (ev.type === "error") trial?.failed(ev.message);
            return;
          }
          // A replaced session only finishes its last turn: its failure, or its failover, is not the conversation's.
          if (this.replaced.has(session) && (ev.type === "error" || ev.type === "switched")) return;
          if (!("turnId" in ev)) return this.listener.event(ev);
          const turn = base + Number(ev.turnId.slice("turn_".length));
          this.lastTurn = Math.max(this.lastTurn, turn);
          this.listener.event({ ...ev, turnId: `turn_${turn}` });
        },
        close: (code, reason) => {
          if (this.trying.has(session)) return trial?.closed();
          if (!this.replaced.delete(session)) return this.listener.closed(code, reason);
          if (!this.replaced.size) this.allClosed?.();
        },
      },
      settings,
    );
    return session;
  }
}
