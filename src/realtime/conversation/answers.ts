import type { Logger } from "../../log.ts";
import type { AppMessage } from "../app-messages.ts";
import type { OutputFormat } from "../output-formats.ts";
import type { ConversationEvent } from "./conversation-events.ts";
import { type OpenTts, type ResponseEnd, SpokenResponse } from "./spoken-response.ts";

// The application's answers, spoken one after another, each by its own `SpokenResponse`, fed its
// tokens as they arrive. Tokens of a next answer wait while one is being generated, unless that
// one was sent `preemptible`. The next answer's TTS session may be opened ahead of its first token.
// A barge-in stops what is playing, and the rest of the interrupted answer's tokens are dropped
// until its `last: true` or the next prompt. Once the conversation winds down no token is taken,
// and the answers received are spoken as far as they came.

export type Text = Extract<AppMessage, { type: "text" }>;

export interface AnswerSettings {
  openTts: OpenTts;
  output: OutputFormat;
  /** How long an answer without `last: true` may go without a token before it is finished. */
  quietMs: number;
  log: Logger;
}

export interface AnswerHooks {
  event(event: ConversationEvent): void;
  sendAudio(chunk: Uint8Array): void | Promise<void>;
  /** An answer is being made until `made` settles (the conversation is not idle meanwhile). */
  making(made: Promise<void>): void;
  /** An answer was spoken, or stopped by a barge-in: the characters billed. */
  spoken(characters: number): void;
  /** An answer's TTS session ended with an error close: the conversation cannot go on. */
  failed(end: Extract<ResponseEnd, { ok: false }>): void;
  /** An answer ended, and nothing waits to be spoken. */
  settled(): void;
}

export class Answers {
  private current: SpokenResponse | undefined;
  /** The next answer's TTS session, opened ahead and waiting for its first token. */
  private primed: SpokenResponse | undefined;
  /** Opened ahead, then given up for an answer in another language. */
  private readonly givenUp = new WeakSet<SpokenResponse>();
  /** The last answer generated in full: its audio may still be playing at the client. */
  private previous: SpokenResponse | undefined;
  /** Tokens of the next answer, waiting for the current one to be spoken. */
  private waiting: Text[] = [];
  /** After a barge-in, the rest of the interrupted answer's tokens are dropped. */
  private discarding = false;
  /** The conversation is winding down: no more tokens are taken. */
  private closing = false;
  private stopped = false;
  private responses = 0;

  constructor(
    private readonly settings: AnswerSettings,
    private readonly hooks: AnswerHooks,
  ) {}

  /** An answer is being generated, or waits to be. */
  get busy(): boolean {
    return this.current !== undefined || this.waiting.length > 0;
  }

  /** The answer being generated (or the last one waiting) has not had its `last: true`. */
  get unfinished(): boolean {
    const waiting = this.waiting.at(-1);
    return waiting ? !waiting.last : this.current?.complete === false;
  }

  /** A finished turn went to the application: whatever comes next answers it. */
  prompted(): void {
    this.discarding = false;
  }

  /** A token of the application's answer. */
  take(text: Text): void {
    if (this.closing || this.stopped) return;
    if (this.discarding) {
      if (text.last) this.discarding = false;
      return;
    }
    this.place(text);
  }

  /** Opens the next answer's TTS session ahead of its first token, unless one is open already. */
  prime(): void {
    if (!this.primed && !this.closing && !this.stopped) this.primed = this.newResponse();
  }

  /** The caller spoke (or pressed a key) over what is being said (generated or still playing): it stops, if it may be stopped so. Says what the caller heard of it. */
  interrupt(by: "speech" | "dtmf" = "speech"): { responseId: string; spokenText: string; audioMs: number } | undefined {
    const playing = [this.previous, this.current].filter((r): r is SpokenResponse => r?.playing === true);
    if (!playing.length || !playing.every((r) => r.interruptibleBy(by))) return;
    const [heard] = playing.map((r) => ({ responseId: r.id, ...r.interrupt() }));
    this.previous = undefined;
    if (this.current) this.discarding = !this.current.complete;
    this.current = undefined;
    this.waiting = [];
    return heard;
  }

  /** No more tokens will be taken: each answer received is spoken as far as it came, and ends there. */
  finishReceived(): void {
    this.closing = true;
    if (this.current && !this.current.complete) this.current.finish();
    const waiting = this.waiting.at(-1);
    if (waiting && !waiting.last) this.waiting.push({ ...waiting, token: "", last: true });
  }

  /** The conversation is over: whatever is still generated or open stops (and bills what it used). */
  abort(): void {
    this.stopped = true;
    this.current?.abort();
    this.primed?.abort();
  }

  private place(text: Text): void {
    const current = this.current;
    if (current && !current.complete) return current.add(text.token, text.last, text.interruptible, text.preemptible);
    if (current?.preemptible) current.interrupt();
    if (this.current) return void this.waiting.push(text);
    this.speak(text);
  }

  /** An answer whose first token names a `lang` is spoken in it: the session opened ahead (in the conversation's voice) is given up. */
  private speak(first: Text): void {
    if (first.lang && this.primed) {
      this.givenUp.add(this.primed);
      this.primed.abort();
      this.primed = undefined;
    }
    const response = this.primed ?? this.newResponse(first.lang);
    this.primed = undefined;
    this.current = response;
    this.hooks.making(response.made);
    response.add(first.token, first.last, first.interruptible, first.preemptible);
  }

  private newResponse(language?: string): SpokenResponse {
    const { openTts, output, quietMs } = this.settings;
    const hooks = {
      event: (ev: ConversationEvent) => this.hooks.event(ev),
      sendAudio: (chunk: Uint8Array) => this.hooks.sendAudio(chunk),
      ended: (response: SpokenResponse, end: ResponseEnd) => this.ended(response, end),
    };
    return new SpokenResponse(`resp_${++this.responses}`, openTts, output, quietMs, hooks, language);
  }

  private ended(response: SpokenResponse, end: ResponseEnd): void {
    if (this.current === response) this.current = undefined;
    if (this.stopped) return;
    if (this.givenUp.has(response)) return;
    if (response === this.primed) {
      // Lost before its first token (a provider that closes idle sockets, a balance run down): the answer opens a new one.
      this.primed = undefined;
      return this.settings.log.info({ response: response.id, ...(end.ok ? {} : { code: end.code, reason: end.reason }) }, "a TTS session opened ahead ended unused");
    }
    if (end.ok && response.playing) this.previous = response;
    if (!end.ok) return this.hooks.failed(end);
    this.hooks.spoken(end.characters);
    const next = this.waiting.shift();
    if (!next) return this.hooks.settled();
    this.speak(next);
    for (const text of this.waiting.splice(0)) this.place(text);
  }
}
