// What the router answers a carrier's call webhook with: TwiML for Twilio, TeXML (Telnyx's
// Twilio-compatible markup) for Telnyx. A call that may go on connects a bidirectional stream to
// the router's media socket; one that may not is told so and hung up.
// - Twilio: `<Connect><Stream url>` (bidirectional; `<Start><Stream>` would be one-way). Its stream
//   URLs take no query string, so the single-use credential is a `<Parameter>`, which arrives in
//   `start.customParameters`.
// - Telnyx: `<Connect><Stream bidirectionalMode="rtp" bidirectionalCodec="PCMU">` (`<Connect>`
//   holds the call while the stream runs); the credential rides in the stream URL's query.

/** The `<Parameter>` that carries the call's credential to the media socket's `start` (Twilio). */
export const CREDENTIAL_PARAMETER = "voxroute_credential";

const xml = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&apos;");

const document = (body: string) => `<?xml version="1.0" encoding="UTF-8"?><Response>${body}</Response>`;

export function twilioStream(mediaUrl: string, credential: string): string {
  return document(`<Connect><Stream url="${xml(mediaUrl)}"><Parameter name="${CREDENTIAL_PARAMETER}" value="${xml(credential)}"/></Stream></Connect>`);
}

export function telnyxStream(mediaUrl: string, credential: string): string {
  const url = `${mediaUrl}?credential=${encodeURIComponent(credential)}`;
  return document(`<Connect><Stream url="${xml(url)}" bidirectionalMode="rtp" bidirectionalCodec="PCMU"/></Connect>`);
}

/** Either carrier: the caller is told why, and the call ends. */
export function sayAndHangUp(message: string): string {
  return document(`<Say>${xml(message)}</Say><Hangup/>`);
}
