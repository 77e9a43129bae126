import { createHmac } from "node:crypto";
import { type CarrierSpelling, callForm, PhoneStream, readMarkup, type WebhookAnswer } from "./phone-caller.ts";

// Twilio calling a number's voice webhook and streaming the call (phone-caller.ts has what both
// carriers share). Signature, per Twilio's "Webhooks security": the full URL Twilio requested,
// then each POST parameter's name and value, sorted by name, HMAC-SHA1 keyed by the account's
// auth token, base64, in `X-Twilio-Signature`. Stream frames per "Media Streams - WebSocket
// Messages": camelCase, `streamSid` on each, `start.callSid`, `start.customParameters`.

export function twilioSign(authToken: string, url: string, form: [string, string][]): string {
  const sorted = [...form].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return createHmac("sha1", authToken)
    .update(url + sorted.map(([k, v]) => `${k}${v}`).join(""))
    .digest("base64");
}

const spelling: CarrierSpelling = {
  connected: { event: "connected", protocol: "Call", version: "1.0.0" },
  sequenceKey: "sequenceNumber",
  start: ({ streamId, callSid, customParameters }) => ({
    event: "start",
    start: {
      streamSid: streamId,
      accountSid: "AC0123456789abcdef0123456789abcdef",
      callSid,
      tracks: ["inbound"],
      customParameters,
      mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
    },
    streamSid: streamId,
  }),
  media: ({ streamId }, payload, chunk, timestampMs) => ({ event: "media", media: { track: "inbound", chunk: String(chunk), timestamp: String(timestampMs), payload }, streamSid: streamId }),
  dtmf: ({ streamId }, digit) => ({ event: "dtmf", streamSid: streamId, dtmf: { track: "inbound_track", digit } }),
  mark: ({ streamId }, name) => ({ event: "mark", streamSid: streamId, mark: { name } }),
  stop: ({ streamId, callSid }) => ({ event: "stop", streamSid: streamId, stop: { accountSid: "AC0123456789abcdef0123456789abcdef", callSid } }),
};

export interface TwilioCall {
  callSid: string;
  from: string;
  to: string;
}

export const twilioCall = (n = 1): TwilioCall => ({ callSid: `CA${crypto.randomUUID().replaceAll("-", "")}`, from: "+15551230000", to: `+1555999000${n}` });

/**
 * POSTs the webhook as Twilio does. `signedUrl` is the URL Twilio believes it requested (the
 * number's configured URL, which a proxy in front of the router may rewrite); `authToken` signs.
 */
export async function twilioRings(webhookUrl: string, authToken: string, call: TwilioCall, signedUrl = webhookUrl, signature?: string): Promise<WebhookAnswer> {
  const form = callForm(call);
  const res = await fetch(webhookUrl, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature ?? twilioSign(authToken, signedUrl, form), "i-twilio-idempotency-token": crypto.randomUUID() },
    body: new URLSearchParams(form).toString(),
  });
  return readMarkup(res.status, await res.text());
}

/** Opens the stream the TwiML names, as Twilio does (the URL as given: Twilio adds no query). */
export function twilioStream(answer: WebhookAnswer, call: TwilioCall): PhoneStream {
  if (!answer.stream) throw new Error(`the TwiML connects no stream: ${answer.body}`);
  const ws = new WebSocket(answer.stream.url);
  return new PhoneStream(ws, spelling, { streamId: `MZ${crypto.randomUUID().replaceAll("-", "")}`, callSid: call.callSid });
}
