// The application socket's messages, as ConversationRelay applications speak them (upstreams sheet
// section 7, Twilio's and Telnyx's references): what the router reads from the application, and
// what it sends. All frames are JSON text.

/** What may stop an answer being spoken: the caller's speech, a key the caller presses, either, or nothing. */
export type Interruptible = "none" | "dtmf" | "speech" | "any";

/** What the application asks of the router. */
export type AppMessage =
  /** Text to speak, as an LLM streams it; `last` closes the response. */
  | { type: "text"; token: string; last: boolean; lang?: string; interruptible: Interruptible; preemptible: boolean }
  | { type: "language"; ttsLanguage?: string; transcriptionLanguage?: string }
  /** Digits to play to the far end of a telephone line (`0`–`9`, `*`, `#`, `A`–`D`, `w` for a half-second pause). */
  | { type: "sendDigits"; digits: string }
  /** End the conversation; `handoffData` goes to the client. */
  | { type: "end"; handoffData?: string };

/** What the router tells the application. */
export type RouterMessage =
  | ({ type: "setup"; sessionId: string; profileId: string; customParameters: Record<string, string> } & CallIdentity)
  | { type: "prompt"; voicePrompt: string; lang?: string; last: boolean }
  | { type: "interrupt"; utteranceUntilInterrupt: string; durationUntilInterruptMs: number }
  | { type: "dtmf"; digit: string }
  | { type: "error"; description: string };

/** What an application sends that asks nothing of the conversation: a `pong`, a stale answer's chunk. */
export type AppFrame = AppMessage | { invalid: string } | { pong: true } | { stale: true };

/**
 * One application protocol: what the router says (each method the frames to send, as JSON text)
 * and how it reads what the application says. ConversationRelay's is below; ElevenLabs' Speech
 * Engine's is `SpeechEngineWire`.
 */
export interface AppWire {
  hello(): object[];
  /** What the caller said: a partial (`last: false`) or the finished turn. */
  prompt(text: string, last: boolean, lang?: string): object[];
  /** The caller talked over the answer: what of it was spoken, and for how long. */
  interrupt(spokenText: string, audioMs: number): object[];
  /** The caller pressed a key, where the protocol tells keys. */
  dtmf?(digit: string): object[];
  refuse(description: string): object[];
  /** Said before the router closes the socket itself. */
  farewell(): object[];
  /** A keepalive, when the protocol has one (answered by `pong`). */
  ping?(): object;
  read(frame: string | Uint8Array): AppFrame;
}

/**
 * The call a conversation answers, in the fields of Twilio's `setup`. A surface that carries a
 * telephone call fills what its carrier tells; a conversation without one (`/v1/realtime`) sends
 * them empty, `direction` "inbound".
 */
export interface CallIdentity {
  callSid: string;
  accountSid: string;
  parentCallSid: string;
  from: string;
  to: string;
  forwardedFrom: string;
  callerName: string;
  callType: string;
  callStatus: string;
  /** Twilio's `Direction` as the carrier gave it (`inbound`, `outbound-api`, `outbound-dial`). */
  direction: string;
}

const NO_CALL: CallIdentity = { callSid: "", accountSid: "", parentCallSid: "", from: "", to: "", forwardedFrom: "", callerName: "", callType: "", callStatus: "", direction: "inbound" };

export interface AppSetup {
  sessionId: string;
  profileId: string;
  /** The telephone call, when the surface carries one. */
  call?: Partial<CallIdentity>;
  customParameters?: Record<string, string>;
  /** Spoken when the conversation starts: the first agent message of the conversation so far. */
  greeting?: string;
}

/** ConversationRelay: `setup` first, `prompt`, `interrupt`, `error`; read with `readAppFrame`. */
export function conversationRelayWire(setup: AppSetup): AppWire {
  const say = (msg: RouterMessage) => [msg];
  return {
    hello: () => say({ type: "setup", sessionId: setup.sessionId, profileId: setup.profileId, ...NO_CALL, ...setup.call, customParameters: setup.customParameters ?? {} }),
    prompt: (voicePrompt, last, lang) => say({ type: "prompt", voicePrompt, ...(lang ? { lang } : {}), last }),
    interrupt: (utteranceUntilInterrupt, ms) => say({ type: "interrupt", utteranceUntilInterrupt, durationUntilInterruptMs: Math.round(ms) }),
    dtmf: (digit) => say({ type: "dtmf", digit }),
    refuse: (description) => say({ type: "error", description }),
    farewell: () => [],
    read: readAppFrame,
  };
}

/** Messages the vocabulary has that the router does not carry out (docs/realtime.md#the-vocabulary-today): each is answered with `error`. */
const UNSUPPORTED: Record<string, string> = {
  play: "play is not supported: the router does not fetch audio from URLs an application names",
  config: "config is not supported: a conversation's settings are its profile's",
  hints: "hints is not supported: a conversation's recognizer settings are its profile's",
};

const DIGITS = /^[0-9*#A-Dw]{1,64}$/;

/**
 * Twilio accepts `interruptible` as what may interrupt ("none", "dtmf", "speech", "any") or as a
 * boolean: true is "any", false "none". Absent: "any", as in both references.
 */
function interruptibleOf(v: unknown): Interruptible | undefined {
  if (v === undefined || v === true) return "any";
  if (v === false) return "none";
  return v === "none" || v === "dtmf" || v === "speech" || v === "any" ? v : undefined;
}

const optionalString = (v: unknown) => v === undefined || typeof v === "string";

/** A frame as both protocols take them: a JSON object with a string `type`, or why it is not. */
export function jsonFrame(frame: string | Uint8Array): (Record<string, unknown> & { type: string }) | { invalid: string } {
  if (typeof frame !== "string") return { invalid: "frames are JSON text, not binary" };
  let msg: Record<string, unknown>;
  try {
    msg = JSON.parse(frame);
  } catch {
    return { invalid: "a frame is not JSON" };
  }
  if (typeof msg !== "object" || msg === null || Array.isArray(msg) || typeof msg.type !== "string") return { invalid: "a frame is a JSON object with a string type" };
  return msg as Record<string, unknown> & { type: string };
}

/** An application frame read, or why it cannot be taken (the `error` description sent back). */
export function readAppFrame(frame: string | Uint8Array): AppMessage | { invalid: string } {
  const msg = jsonFrame(frame);
  if (!("type" in msg)) return msg;
  switch (msg.type) {
    case "text": {
      const interruptible = interruptibleOf(msg.interruptible);
      if (typeof msg.token !== "string") return { invalid: "text needs a string token" };
      if (msg.last !== undefined && typeof msg.last !== "boolean") return { invalid: "text's last is a boolean" };
      if (interruptible === undefined) return { invalid: 'text\'s interruptible is a boolean, "none", "dtmf", "speech" or "any"' };
      if (msg.preemptible !== undefined && typeof msg.preemptible !== "boolean") return { invalid: "text's preemptible is a boolean" };
      if (!optionalString(msg.lang)) return { invalid: "text's lang is a string" };
      return { type: "text", token: msg.token, last: msg.last === true, interruptible, preemptible: msg.preemptible === true, ...(msg.lang ? { lang: msg.lang as string } : {}) };
    }
    case "language": {
      const { ttsLanguage, transcriptionLanguage } = msg;
      if (!optionalString(ttsLanguage) || !optionalString(transcriptionLanguage) || (!ttsLanguage && !transcriptionLanguage)) {
        return { invalid: "language names a ttsLanguage, a transcriptionLanguage or both, as strings" };
      }
      return { type: "language", ...(ttsLanguage ? { ttsLanguage: ttsLanguage as string } : {}), ...(transcriptionLanguage ? { transcriptionLanguage: transcriptionLanguage as string } : {}) };
    }
    case "sendDigits":
      if (typeof msg.digits !== "string" || !DIGITS.test(msg.digits)) return { invalid: "sendDigits needs digits: 1 to 64 of 0-9, *, #, A-D and w" };
      return { type: "sendDigits", digits: msg.digits };
    case "end":
      if (!optionalString(msg.handoffData)) return { invalid: "end's handoffData is a string" };
      return { type: "end", ...(msg.handoffData !== undefined ? { handoffData: msg.handoffData as string } : {}) };
    default:
      return { invalid: UNSUPPORTED[msg.type] ?? `unknown message type ${JSON.stringify(msg.type).slice(0, 64)}` };
  }
}
