import { type AppFrame, type AppSetup, type AppWire, jsonFrame } from "./app-messages.ts";

// ElevenLabs' Speech Engine protocol, as its SDK's `SpeechEngineSession` speaks it (the app's
// end; @elevenlabs/elevenlabs-js wrapper/speech-engine): the router says `init` first, then at each
// finished turn a `user_transcript` holding the whole conversation so far with a new `event_id`,
// `ping`s, `error`, and `close` before it hangs up; the application streams `agent_response`
// chunks (`content`, `event_id`, `is_final`) and answers pings with `pong`. A new transcript is
// what aborts the answer in progress (the SDK fires its abort signal): chunks of any event but the
// latest are dropped, as is the rest of an answer the caller talked over. The conversation holds
// the greeting, each turn, and each answer as far as the caller heard it.

type Turn = { role: "user" | "agent"; content: string };

export class SpeechEngineWire implements AppWire {
  private readonly history: Turn[] = [];
  private eventId = 0;
  /** What the application has streamed of the current event's answer. */
  private answer = "";
  /** The current event's answer is over: finished, or talked over. */
  private answered = true;

  constructor(private readonly setup: AppSetup) {
    if (setup.greeting) this.history.push({ role: "agent", content: setup.greeting });
  }

  hello(): object[] {
    return [{ type: "init", conversation_id: this.setup.sessionId }];
  }

  /** Only finished turns: the protocol has no partial transcripts. */
  prompt(text: string, last: boolean): object[] {
    if (!last) return [];
    this.endAnswer(this.answer);
    this.history.push({ role: "user", content: text });
    this.eventId++;
    this.answer = "";
    this.answered = false;
    return [{ type: "user_transcript", user_transcript: this.history.map((t) => ({ ...t })), event_id: this.eventId }];
  }

  /** The answer is kept as far as it was heard (not at all if nothing was); the rest the application streams is dropped. */
  interrupt(spokenText: string): object[] {
    if (!this.answered) this.endAnswer(spokenText);
    else if (this.history.at(-1)?.role === "agent") {
      if (spokenText) this.history.at(-1)!.content = spokenText;
      else this.history.pop();
    }
    return [];
  }

  refuse(description: string): object[] {
    return [{ type: "error", message: description }];
  }

  farewell(): object[] {
    return [{ type: "close" }];
  }

  ping(): object {
    return { type: "ping" };
  }

  read(frame: string | Uint8Array): AppFrame {
    const msg = jsonFrame(frame);
    if (!("type" in msg)) return msg;
    if (msg.type === "pong") return { pong: true };
    if (msg.type !== "agent_response") return { invalid: `unknown message type ${JSON.stringify(msg.type).slice(0, 64)}` };
    const { content, event_id, is_final } = msg;
    if (typeof content !== "string") return { invalid: "agent_response needs a string content" };
    if (typeof is_final !== "boolean") return { invalid: "agent_response's is_final is a boolean" };
    if (event_id !== undefined && event_id !== null && typeof event_id !== "number") return { invalid: "agent_response's event_id is a number" };
    // Without an event_id the SDK means the latest transcript.
    if ((typeof event_id === "number" && event_id !== this.eventId) || this.answered) return { stale: true };
    this.answer += content;
    if (is_final) {
      this.endAnswer(this.answer);
      this.answered = true;
    }
    return { type: "text", token: content, last: is_final, interruptible: "any", preemptible: false };
  }

  private endAnswer(said: string): void {
    if (!this.answered && said) this.history.push({ role: "agent", content: said });
    this.answered = true;
  }
}
