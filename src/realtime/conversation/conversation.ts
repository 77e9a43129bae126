import { ApiError, CLOSE, closeReason, ERRORS, failureCloseReason } from "../../errors.ts";
import type { Logger } from "../../log.ts";
import type { AppSignal, AppSocket } from "../app-socket.ts";
import type { SttSessionEvent } from "../../sessions/stt-events.ts";
import { unreachable } from "../../util/unreachable.ts";
import type { ConversationEvent, ConversationUsage, EndReason } from "./conversation-events.ts";
import { Hearing } from "./hearing.ts";
import type { ConversationDeps, ConversationSetup } from "./conversation-setup.ts";
import { switchLanguages } from "./language-switch.ts";
import { Answers } from "./answers.ts";
import { IdleTimer } from "../../sessions/idle-timer.ts";
import { requestBinding } from "../../request-context.ts";
import { activeSpan, withSpan } from "../../tracing/spans.ts";
import { TurnSpans } from "./turn-spans.ts";
import { TurnTaking } from "./turn-taking.ts";

// A realtime conversation: the caller's audio goes to one STT session (turns by the provider or
// the router VAD); each finished turn goes to the application as a `prompt`; the application's
// `text` tokens are spoken by one TTS session per response, as they arrive (`Answers`). The caller
// speaking over an interruptible response stops it (barge-in; the turns and what stops an answer
// are `TurnTaking`'s). Each part is metered on its own (the STT session and every response have
// their own activity record).
// The next answer's TTS session is opened when the caller starts speaking (admission and the
// provider's connection take place while the caller talks and the application thinks), so the
// application's first token finds it ready. The conversation is idle, and ends, only when neither
// the caller nor the application has sent anything, and no answer has been made or sent, for the
// idle timeout: a caller may listen, type, or hold a button to talk.

export class Conversation {
  private readonly stt: Hearing;
  private readonly answers: Answers;
  private readonly turns: TurnTaking;
  /** Runs from the start (connecting the recognizer and the application is not the caller's idleness). */
  private idle: IdleTimer | undefined;
  private app: AppSocket | undefined;
  private sttStarted: { provider: string; model: string } | undefined;
  private started = false;
  private readonly usage: ConversationUsage = { sttSeconds: 0, ttsCharacters: 0 };
  /** Set once the conversation is winding down: how it will end (with `failure`, as an error once what was received is spoken). */
  private ending: { reason: EndReason; handoffData?: string; failure?: ApiError } | undefined;
  private closed = false;
  private readonly log: Logger;
  /** With tracing on: the conversation's span and its turns'. */
  private readonly spans: TurnSpans | undefined;

  constructor(
    private readonly setup: ConversationSetup,
    private readonly deps: ConversationDeps,
  ) {
    this.log = deps.log.child({ realtime: setup.id, ...requestBinding() });
    // Claimed before the recognizer's session is opened: that session gets a span of its own under it.
    const root = activeSpan();
    this.spans = root?.claim() ? new TurnSpans(root) : undefined;
    this.answers = new Answers(
      {
        openTts: (id, port, language) => {
          const open = () => setup.openTts(id, port, language === undefined ? undefined : { language, refused: (why) => this.app?.refuse(`lang ${language}: ${why}`) });
          // An answer's session is opened from a recognizer's or the application's callback: its span goes under the turn being answered, else the conversation's.
          return this.spans ? withSpan(this.spans.current, open) : open();
        },
        output: setup.output,
        quietMs: setup.answerQuietMs,
        log: this.log,
      },
      {
        event: (ev) => this.emit(ev),
        sendAudio: (chunk) => this.sendAudio(chunk),
        making: (made) => void this.idle?.during(made),
        spoken: (characters) => void (this.usage.ttsCharacters += characters),
        failed: (end) => {
          if (end.error) this.emit({ type: "error", code: end.error.code, message: end.error.message });
          this.stop(end.code, end.reason, end.code === ERRORS.insufficient_balance.close ? "balance_exhausted" : "error");
        },
        settled: () => {
          if (this.ending) this.windDown(this.ending.reason);
        },
      },
    );
    this.turns = new TurnTaking(this.answers, { event: (ev) => this.emit(ev), app: () => this.app, language: () => this.stt.language, ending: () => this.ending !== undefined }, setup.partialPrompts);
    this.stt = new Hearing(setup.openStt, { event: (ev) => this.onStt(ev), closed: (code, reason) => this.onSttClosed(code, reason) }, setup.language);
    setup
      .openApp((signal) => this.onApp(signal))
      .then(
        (app) => {
          if (this.closed) return app.close(CLOSE.normal, "the conversation ended");
          this.app = app;
          this.maybeStart();
        },
        (err: Error) => this.fail(new ApiError("application_unavailable", err.message)),
      );
  }

  /** Caller audio, from the moment the socket opened. */
  audio(frame: Uint8Array): void {
    this.stillHere();
    if (!this.closed) this.stt.audio(frame);
  }

  /** The client ends the caller's turn now. */
  commit(): void {
    this.stillHere();
    if (!this.closed && !this.ending) this.stt.command({ type: "commit" });
  }

  /** The client drops what the caller said of the turn so far (OpenAI's `input_audio_buffer.clear`). */
  clear(): void {
    this.stillHere();
    if (!this.closed && !this.ending) this.stt.command({ type: "clear" });
  }

  /** The client stops the answer being spoken (OpenAI's `response.cancel`): as a barge-in. */
  cancelAnswer(): void {
    this.stillHere();
    if (!this.closed) this.turns.bargeIn();
  }

  /** The caller pressed a key (a surface with a telephone line): it stops an answer that keys may stop, and the application is told. */
  dtmf(digit: string): void {
    this.stillHere();
    if (this.closed) return;
    this.turns.bargeIn("dtmf");
    this.app?.dtmf(digit);
  }

  /** The client sent something that asks nothing of the conversation (ElevenLabs' `user_activity`): it is not idle. */
  stillHere(): void {
    this.idle?.touch();
  }

  /** Text the caller typed instead of speaking (ElevenLabs' `user_message`): a finished turn of its own. */
  type(text: string): void {
    this.stillHere();
    if (this.closed || this.ending || !text.trim()) return;
    this.turns.type(text.trim());
  }

  /** Whether turns end only when the client commits them; rejects (and nothing changes) when the recognizers cannot. */
  commitTurnsManually(manual: boolean): Promise<void> {
    this.stillHere();
    return this.stt.switchTo({ manualCommits: manual });
  }

  /** The client asks to end: what is being said is finished, then the usage and a normal close. */
  close(): void {
    this.windDown("client_closed");
  }

  /** The client went away: everything stops; each part bills what it used. */
  abort(): void {
    if (this.closed) return;
    this.closed = true;
    this.idle?.stop();
    this.stt.abort();
    this.answers.abort();
    this.app?.close(CLOSE.normal, "the caller left");
    this.spans?.end(undefined, "caller_left");
    this.log.info({ usage: this.usage }, "caller left the conversation");
  }

  private emit(event: ConversationEvent): void {
    if (this.closed) return;
    this.spans?.observe(event);
    this.deps.port.event(event);
  }

  private sendAudio(chunk: Uint8Array): void | Promise<void> {
    if (this.closed) return;
    this.stillHere();
    return this.deps.port.sendAudio(chunk);
  }

  private maybeStart(): void {
    if (this.started || this.closed || !this.app || !this.sttStarted) return;
    this.started = true;
    const { id, profileId, input, output, greeting } = this.setup;
    this.emit({ type: "started", sessionId: id, profileId, input, output, stt: this.sttStarted });
    const idleMs = this.setup.idleTimeoutMs;
    this.idle = new IdleTimer(idleMs, () => this.fail(new ApiError("idle_timeout", `nothing from the caller or the application, and no answer made or sent, for ${idleMs / 1000} s`)));
    if (greeting) this.answers.take({ type: "text", token: greeting, last: true, interruptible: "any", preemptible: false });
  }

  private onStt(ev: SttSessionEvent): void {
    switch (ev.type) {
      case "started":
        this.sttStarted = { provider: ev.provider, model: ev.model };
        return this.maybeStart();
      case "signal":
      case "transcript":
      case "committed":
      case "cleared":
        return this.turns.heard(ev);
      case "vad":
        // Nothing reaches the client before `started` (ElevenLabs' metadata must come first).
        if (this.started) this.emit({ type: "vad", score: ev.score, atMs: ev.atMs });
        return;
      case "error":
        this.log.info({ code: ev.code, reason: ev.message }, "the recognizer ended with an error");
        return this.emit({ type: "error", code: ev.code, message: ev.message });
      case "switched": {
        // The application sees nothing of it; before the conversation started, `started` names the provider that now serves.
        this.log.info({ provider: ev.provider, previous: ev.previous, reason: ev.reason }, "the recognizer switched provider");
        if (!this.started) return void (this.sttStarted = { provider: ev.provider, model: ev.model });
        return this.emit({ type: "provider_switched", stage: "stt", provider: ev.provider, model: ev.model, previous: ev.previous, reason: ev.reason });
      }
      case "ended":
        return;
      default:
        return unreachable(ev, "STT session event");
    }
  }

  private onSttClosed(code: number, reason: string): void {
    if (this.closed) return;
    if (code === CLOSE.normal && this.ending) return void this.stt.replacedClosed().then(() => this.finish());
    // The STT session sent its error event already.
    if (code === ERRORS.insufficient_balance.close) return this.stop(code, reason, "balance_exhausted");
    if (code === CLOSE.normal) return this.stop(ERRORS.upstream_error.close, closeReason("upstream_error"), "error");
    this.stop(code, reason, "error");
  }

  private onApp(signal: AppSignal): void {
    if (this.closed) return;
    this.stillHere();
    switch (signal.type) {
      case "text":
        return this.answers.take(signal);
      case "end":
        return this.windDown("application_ended", signal.handoffData);
      case "language":
        return void switchLanguages(
          { hearing: this.stt, speakIn: (language) => this.setup.speakIn(language), app: () => this.app, event: (ev) => this.emit(ev), log: this.log },
          signal.ttsLanguage,
          signal.transcriptionLanguage,
        );
      case "sendDigits":
        if (this.setup.phoneLine) return this.emit({ type: "send_digits", digits: signal.digits });
        return this.app?.refuse("sendDigits: this conversation has no telephone line to send digits on");
      case "closed":
        this.log.info({ code: signal.code, reason: signal.reason }, "the application closed its socket");
        if (!this.answers.unfinished) return this.windDown("application_closed");
        // Gone in the middle of an answer: the caller hears what came, then the conversation fails.
        return this.windDown("application_closed", undefined, new ApiError("application_disconnected", `the application closed its socket (${signal.code}) in the middle of an answer`));
      case "silent":
        return this.fail(new ApiError("application_timeout", `the application did not answer the caller within ${signal.afterMs} ms`));
    }
  }

  /** Ends once the answers received are spoken: the recognizer is closed, then `finish` (or the failure). */
  private windDown(reason: EndReason, handoffData?: string, failure?: ApiError): void {
    if (this.closed) return;
    this.ending ??= { reason, ...(handoffData !== undefined ? { handoffData } : {}), ...(failure ? { failure } : {}) };
    this.answers.finishReceived();
    if (this.answers.busy) return;
    if (this.ending.failure) return this.fail(this.ending.failure);
    this.stt.command({ type: "close" });
  }

  /** The recognizer finished after the wind-down: usage, then the normal close. */
  private finish(): void {
    if (this.closed) return;
    const { reason, handoffData } = this.ending!;
    this.usage.sttSeconds = this.stt.seconds;
    this.emit({ type: "ended", sessionId: this.setup.id, reason, ...(handoffData !== undefined ? { handoffData } : {}), usage: this.usage });
    this.closeAll(CLOSE.normal, reason === "client_closed" ? "conversation_complete" : reason);
  }

  private fail(error: ApiError): void {
    if (this.closed) return;
    this.log.info({ code: error.code, reason: error.message }, "conversation failed");
    this.emit({ type: "error", code: error.code, message: error.message });
    this.stop(error.closeCode, failureCloseReason(error), "error");
  }

  /** Ends now: whatever still runs is stopped (and bills what it used). */
  private stop(code: number, reason: string, why: EndReason): void {
    if (this.closed) return;
    this.log.info({ code, why, usage: this.usage }, "conversation stopped");
    this.stt.abort();
    this.closeAll(code, reason);
  }

  private closeAll(code: number, reason: string): void {
    this.closed = true;
    this.idle?.stop();
    this.answers.abort();
    this.stt.stopTrying();
    this.app?.close(CLOSE.normal, "the conversation ended");
    this.spans?.end(code, reason);
    this.deps.port.close(code, reason);
  }
}
