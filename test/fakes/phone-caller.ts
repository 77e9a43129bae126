// A carrier calling a voice webhook and streaming the call's audio, as Twilio's and Telnyx's public
// docs describe it (upstreams sheet section 8; Twilio's "Media Streams - WebSocket Messages",
// "TwiML <Stream>" and "Webhooks security"; Telnyx's "Media Streaming" and TeXML `<Stream>`):
// - the webhook is an HTTP POST, form-encoded (`CallSid`, `AccountSid`, `From`, `To`,
//   `Direction`, `CallStatus`), signed by the carrier (twilio-caller.ts, telnyx-caller.ts);
// - the answer is XML: `<Connect><Stream url>` with `<Parameter name value>` children, or
//   `<Say>` and `<Hangup/>`;
// - the stream is a WebSocket of JSON text frames: `connected`, `start`, `media` every 20 ms
//   (160 bytes of base64 µ-law at 8 kHz), `dtmf`, `mark` (echoed back once the audio before a
//   mark the server sent has played: here, when it arrives, as nothing is played) and `stop`; the
//   server sends `media`, `mark` and `clear`.
// The carriers differ in their field names (Twilio camelCase with `streamSid`, Telnyx snake_case
// with `stream_id` and `call_control_id`), given by `CarrierSpelling`.

export interface WebhookAnswer {
  status: number;
  body: string;
  /** `<Stream url>` and its `<Parameter>`s, when the answer connects a stream. */
  stream?: { url: string; attributes: Record<string, string>; parameters: Record<string, string> };
  says?: string;
  hangsUp: boolean;
}

const unxml = (s: string) => s.replaceAll("&quot;", '"').replaceAll("&apos;", "'").replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&amp;", "&");

function attributesOf(tag: string): Record<string, string> {
  return Object.fromEntries([...tag.matchAll(/([A-Za-z]+)="([^"]*)"/g)].map((m) => [m[1]!, unxml(m[2]!)]));
}

/** The XML a webhook answered, read as a carrier reads it. */
export function readMarkup(status: number, body: string): WebhookAnswer {
  const streamTag = /<Connect>\s*<Stream\b([^>]*?)\/?>/.exec(body);
  const parameters = Object.fromEntries([...body.matchAll(/<Parameter\b([^>]*)\/>/g)].map((m) => attributesOf(m[1]!)).map((a) => [a.name!, a.value!]));
  const says = /<Say>([^<]*)<\/Say>/.exec(body)?.[1];
  const stream = streamTag ? { url: attributesOf(streamTag[1]!).url!, attributes: attributesOf(streamTag[1]!), parameters } : undefined;
  return { status, body, ...(stream ? { stream } : {}), ...(says !== undefined ? { says: unxml(says) } : {}), hangsUp: body.includes("<Hangup/>") };
}

/** The call's form fields, as both carriers post them (TeXML keeps TwiML's names). */
export function callForm(call: { callSid: string; from: string; to: string }): [string, string][] {
  return [
    ["AccountSid", "AC0123456789abcdef0123456789abcdef"],
    ["CallSid", call.callSid],
    ["CallStatus", "ringing"],
    ["Direction", "inbound"],
    ["From", call.from],
    ["To", call.to],
  ];
}

/** What the server sent on the stream. */
export interface StreamRecording {
  /** Every frame, in order. */
  frames: Record<string, any>[];
  /** The µ-law of each `media` frame the server sent, decoded from base64. */
  media: Uint8Array[];
  close?: { code: number; reason: string };
}

export interface CarrierSpelling {
  start(ids: { streamId: string; callSid: string; customParameters: Record<string, string> }): Record<string, unknown>;
  media(ids: { streamId: string }, payload: string, chunk: number, timestampMs: number): Record<string, unknown>;
  dtmf(ids: { streamId: string }, digit: string): Record<string, unknown>;
  mark(ids: { streamId: string }, name: string): Record<string, unknown>;
  stop(ids: { streamId: string; callSid: string }): Record<string, unknown>;
  connected: Record<string, unknown>;
  /** The member that numbers every frame after `connected`, from 1. */
  sequenceKey: string;
}

/** One call's stream: what the caller sends, paced as a carrier sends it, and what it got back. */
export class PhoneStream {
  readonly rec: StreamRecording = { frames: [], media: [] };
  readonly closed: Promise<StreamRecording>;
  private readonly opened: Promise<void>;
  private chunk = 0;
  private sequence = 0;

  constructor(
    readonly ws: WebSocket,
    private readonly spelling: CarrierSpelling,
    readonly ids: { streamId: string; callSid: string },
  ) {
    this.opened = new Promise((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = (e) => reject(e);
    });
    this.closed = new Promise((resolve) => {
      ws.onclose = (e) => {
        this.rec.close = { code: e.code, reason: e.reason };
        resolve(this.rec);
      };
    });
    ws.onmessage = (e) => {
      const frame = JSON.parse(String(e.data));
      this.rec.frames.push(frame);
      if (frame.event === "media") this.rec.media.push(new Uint8Array(Buffer.from(frame.media.payload, "base64")));
      // Nothing is played here: a mark is reached as soon as it comes.
      if (frame.event === "mark") this.send(this.spelling.mark(this.ids, frame.mark.name));
    };
  }

  /** Sends a frame numbered as the carrier numbers them (a string, as both send it); text is sent as it is. */
  send(frame: Record<string, unknown> | string): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    if (typeof frame === "string") return this.ws.send(frame);
    this.ws.send(JSON.stringify(this.numbered(frame)));
  }

  private numbered(frame: Record<string, unknown>): Record<string, unknown> {
    return frame === this.spelling.connected ? frame : { ...frame, [this.spelling.sequenceKey]: String(++this.sequence) };
  }

  /** `connected` then `start`, as the carrier opens every stream. */
  async begin(customParameters: Record<string, string>): Promise<void> {
    await this.opened;
    this.send(this.spelling.connected);
    this.send(this.spelling.start({ ...this.ids, customParameters }));
  }

  /**
   * µ-law at 8 kHz in 20 ms `media` frames, one every 20 ms. `swapped`: each pair of frames
   * arrives the wrong way round (Telnyx: "Media frame order is not guaranteed"), each keeping the
   * chunk and sequence numbers it was given in order.
   */
  async play(ulaw: Uint8Array, { swapped = false } = {}): Promise<void> {
    let held: Record<string, unknown> | undefined;
    for (let at = 0; at < ulaw.length; at += 160) {
      const frame = ulaw.subarray(at, at + 160);
      this.chunk++;
      const media = this.numbered(this.spelling.media(this.ids, Buffer.from(frame).toString("base64"), this.chunk, this.chunk * 20));
      if (swapped && !held && at + 160 < ulaw.length) held = media;
      else {
        this.send(JSON.stringify(media));
        if (held) this.send(JSON.stringify(held));
        held = undefined;
      }
      await Bun.sleep(20);
    }
  }

  dtmf(digit: string): void {
    this.send(this.spelling.dtmf(this.ids, digit));
  }

  /** The caller hung up. */
  stop(): void {
    this.send(this.spelling.stop(this.ids));
    this.ws.close(1000);
  }

  /** The server's frames of one event type. */
  sent(event: string): Record<string, any>[] {
    return this.rec.frames.filter((f) => f.event === event);
  }
}

/** 16 kHz 16-bit PCM as G.711 µ-law at 8 kHz, converted by ffmpeg (as a phone line carries it). */
export function toPhoneAudio(pcm16k: Int16Array): Uint8Array {
  const run = Bun.spawnSync(["ffmpeg", "-v", "error", "-f", "s16le", "-ar", "16000", "-ac", "1", "-i", "-", "-ar", "8000", "-f", "mulaw", "-"], {
    stdin: new Uint8Array(pcm16k.buffer, pcm16k.byteOffset, pcm16k.byteLength),
  });
  if (run.exitCode !== 0) throw new Error(`ffmpeg failed: ${run.stderr.toString()}`);
  return new Uint8Array(run.stdout);
}

/** µ-law at 8 kHz decoded by ffmpeg to 16 kHz 16-bit PCM (to hear, or to measure). */
export function fromPhoneAudio(ulaw: Uint8Array): Int16Array {
  const run = Bun.spawnSync(["ffmpeg", "-v", "error", "-f", "mulaw", "-ar", "8000", "-ac", "1", "-i", "-", "-ar", "16000", "-f", "s16le", "-"], { stdin: ulaw });
  if (run.exitCode !== 0) throw new Error(`ffmpeg failed: ${run.stderr.toString()}`);
  const out = new Uint8Array(run.stdout);
  return new Int16Array(out.buffer, out.byteOffset, out.byteLength / 2);
}
