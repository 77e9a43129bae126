import type { SttSessionEvent } from "../../sessions/stt-events.ts";
import type { AppSocket } from "../app-socket.ts";
import type { Answers } from "./answers.ts";
import type { ConversationEvent } from "./conversation-events.ts";

// Who has the turn. The caller's turn is heard until it is committed (by the recognizer or the
// client): its final transcripts add up to the prompt the application gets; a typed message is a
// finished turn of its own. With partial prompts, each interim transcript goes to the application
// too, after the turn's finals so far. The caller speaking (speech started, or words heard, for
// recognizers that send no speech signal) over an interruptible answer stops it (barge-in): its
// generation is cancelled, the client is told to drop what it still holds, and the application
// gets `interrupt`; and the next answer's TTS session is readied while the caller talks.

/** What the recognizer tells of the caller's turns. */
export type TurnEvent = Extract<SttSessionEvent, { type: "signal" | "transcript" | "committed" | "cleared" }>;

export interface TurnParties {
  event(event: ConversationEvent): void;
  app(): AppSocket | undefined;
  /** The language the caller is heard in, when known: the application's prompts name it. */
  language(): string | undefined;
  /** The conversation is winding down: a turn that ends now prompts nothing. */
  ending(): boolean;
}

export class TurnTaking {
  /** The final transcripts of the turn being heard. */
  private words: string[] = [];
  private typed = 0;

  constructor(
    private readonly answers: Pick<Answers, "prime" | "prompted" | "interrupt">,
    private readonly to: TurnParties,
    private readonly partialPrompts: boolean,
  ) {}

  heard(ev: TurnEvent): void {
    switch (ev.type) {
      case "signal":
        if (ev.signal !== "started" && ev.signal !== "end") return;
        this.to.event({ type: "speech", turnId: ev.turnId, state: ev.signal === "started" ? "started" : "stopped", atMs: ev.atMs });
        if (ev.signal === "started") this.callerSpeaks();
        return;
      case "transcript":
        if (!ev.text.trim()) return;
        this.to.event({ type: "transcript", turnId: ev.turnId, final: ev.final, text: ev.text, startMs: ev.startMs });
        this.callerSpeaks();
        if (ev.final) this.words.push(ev.text.trim());
        else if (this.partialPrompts) this.to.app()?.prompt([...this.words, ev.text.trim()].join(" "), false, this.to.language());
        return;
      case "committed":
        return this.endTurn(ev.turnId);
      case "cleared":
        this.words = [];
        return;
    }
  }

  /** Text the caller typed (trimmed, not blank): it stops the answer, as speech would, and is a finished turn. */
  type(text: string): void {
    this.bargeIn();
    this.endTurn(`typed_${++this.typed}`, text);
  }

  /** The caller spoke (or pressed a key) over what is being said (generated or still playing): it stops, if it may be stopped so. */
  bargeIn(by: "speech" | "dtmf" = "speech"): void {
    const heard = this.answers.interrupt(by);
    if (!heard) return;
    this.to.event({ type: "response_interrupted", ...heard });
    this.to.app()?.interrupt(heard.spokenText, heard.audioMs);
  }

  private callerSpeaks(): void {
    this.bargeIn();
    this.answers.prime();
  }

  private endTurn(turnId: string, typed?: string): void {
    const text = typed ?? this.words.join(" ");
    if (typed === undefined) this.words = [];
    if (!text || this.to.ending()) return;
    this.to.event({ type: "turn_ended", turnId, text, ...(typed === undefined ? {} : { typed: true as const }) });
    this.answers.prompted();
    this.to.app()?.prompt(text, true, this.to.language());
  }
}
