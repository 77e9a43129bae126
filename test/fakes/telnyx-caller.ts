import { generateKeyPairSync, sign } from "node:crypto";
import { type CarrierSpelling, callForm, PhoneStream, readMarkup, type WebhookAnswer } from "./phone-caller.ts";

// Telnyx calling a TeXML number's webhook and streaming the call (phone-caller.ts has what both
// carriers share). Signature, per Telnyx's webhook docs: Ed25519 by the account's key pair over
// `<timestamp>|<raw body>`, base64 in `telnyx-signature-ed25519`, the Unix timestamp in
// `telnyx-timestamp`; the public key (base64 of its 32 bytes) is what the portal shows. Stream
// frames per the Media Streaming reference: snake_case, `stream_id` at the top, `start.call_control_id`,
// `start.media_format` {encoding PCMU, sample_rate 8000, channels 1}, sequence numbers as strings.

export interface TelnyxAccount {
  /** What the portal shows and a phone link is given. */
  publicKey: string;
  sign(body: string, timestamp: string): string;
}

export function telnyxAccount(): TelnyxAccount {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const jwk = publicKey.export({ format: "jwk" }) as { x: string };
  return {
    publicKey: Buffer.from(jwk.x, "base64url").toString("base64"),
    sign: (body, timestamp) => sign(null, Buffer.from(`${timestamp}|${body}`), privateKey).toString("base64"),
  };
}

const spelling: CarrierSpelling = {
  connected: { event: "connected", version: "1.0.0" },
  sequenceKey: "sequence_number",
  start: ({ streamId, callSid, customParameters }) => ({
    event: "start",
    start: {
      user_id: "3e6f995f-85f7-4705-9741-53b116d28237",
      call_control_id: callSid,
      client_state: "",
      media_format: { encoding: "PCMU", sample_rate: 8000, channels: 1 },
      custom_parameters: customParameters,
    },
    stream_id: streamId,
  }),
  media: ({ streamId }, payload, chunk, timestampMs) => ({ event: "media", media: { track: "inbound", chunk: String(chunk), timestamp: String(timestampMs), payload }, stream_id: streamId }),
  dtmf: ({ streamId }, digit) => ({ event: "dtmf", stream_id: streamId, occurred_at: new Date().toISOString(), dtmf: { digit } }),
  mark: ({ streamId }, name) => ({ event: "mark", stream_id: streamId, mark: { name } }),
  stop: ({ streamId, callSid }) => ({ event: "stop", stop: { user_id: "3e6f995f-85f7-4705-9741-53b116d28237", call_control_id: callSid }, stream_id: streamId }),
};

export interface TelnyxCall {
  /** TeXML's `CallSid` in the webhook; the stream's `call_control_id` is another id of the same call. */
  callSid: string;
  callControlId: string;
  from: string;
  to: string;
}

export const telnyxCall = (n = 1): TelnyxCall => ({ callSid: crypto.randomUUID(), callControlId: `v3:${crypto.randomUUID()}`, from: "+15551230000", to: `+1555888000${n}` });

/** POSTs the TeXML webhook as Telnyx does; `at` is the signing time (seconds), for stale-timestamp checks. */
export async function telnyxRings(webhookUrl: string, account: TelnyxAccount, call: TelnyxCall, at = Math.floor(Date.now() / 1000)): Promise<WebhookAnswer> {
  const body = new URLSearchParams(callForm(call)).toString();
  const timestamp = String(at);
  const res = await fetch(webhookUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "telnyx-signature-ed25519": account.sign(body, timestamp), "telnyx-timestamp": timestamp },
    body,
  });
  return readMarkup(res.status, await res.text());
}

/** Opens the stream the TeXML names, its URL as given (query included). */
export function telnyxStream(answer: WebhookAnswer, call: TelnyxCall): PhoneStream {
  if (!answer.stream) throw new Error(`the TeXML connects no stream: ${answer.body}`);
  const ws = new WebSocket(answer.stream.url);
  return new PhoneStream(ws, spelling, { streamId: crypto.randomUUID(), callSid: call.callControlId });
}
