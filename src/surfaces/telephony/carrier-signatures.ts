import { createHmac, createPublicKey, timingSafeEqual, verify } from "node:crypto";

// The carriers' webhook signatures, checked before the router does anything for a call.
// - Twilio (`X-Twilio-Signature`): base64 of HMAC-SHA1, keyed by the account's auth token, over
//   the full URL Twilio requested followed by every POST parameter's name and value, sorted by name.
// - Telnyx (`telnyx-signature-ed25519`, `telnyx-timestamp`): base64 of an Ed25519 signature, by
//   the account's key pair, over `<timestamp>|<raw body>`; a timestamp older or newer than
//   SIGNATURE_TOLERANCE_S is refused, so a captured request cannot be replayed later.

export const SIGNATURE_TOLERANCE_S = 300;

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Twilio's signature of a form POST to `url`. */
export function twilioSignature(authToken: string, url: string, params: [string, string][]): string {
  const sorted = [...params].sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0));
  const data = url + sorted.map(([k, v]) => k + v).join("");
  return createHmac("sha1", authToken).update(data, "utf8").digest("base64");
}

export function twilioSigned(authToken: string, url: string, params: [string, string][], signature: string | null): boolean {
  if (!signature) return false;
  return sameBytes(Buffer.from(twilioSignature(authToken, url, params)), Buffer.from(signature));
}

/** Whether Telnyx's signature of `body` holds for the base64 public key, at a timestamp within the tolerance of `nowMs`. */
export function telnyxSigned(publicKey: string, body: string, signature: string | null, timestamp: string | null, nowMs = Date.now()): boolean {
  if (!signature || !timestamp || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SIGNATURE_TOLERANCE_S) return false;
  const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(publicKey, "base64").toString("base64url") }, format: "jwk" });
  const sig = Buffer.from(signature, "base64");
  if (sig.length !== 64) return false;
  return verify(null, Buffer.from(`${timestamp}|${body}`), key, sig);
}
