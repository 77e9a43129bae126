import { createHmac } from "node:crypto";

// The token an ElevenLabs Speech Engine connects to its application with, signed as ElevenLabs
// signs it (`verifySpeechEngineJwt` in @elevenlabs/elevenlabs-js): HS256, keyed by the SHA-256 of
// the API key that created the engine. voxroute stores each key only as that SHA-256
// (accounts/keys.ts), so the secret is the stored hash's bytes and no key is kept in clear.

export const SPEECH_ENGINE_AUTH_HEADER = "X-Elevenlabs-Speech-Engine-Authorization";
const ISSUER = "https://api.elevenlabs.io/convai/speech-engine";
const SUBJECT = "convai_speech_engine_upstream";
/** The token is checked once, as the application accepts the connection. */
const LIFETIME_SECONDS = 300;

const base64url = (data: string | Buffer) => Buffer.from(data).toString("base64url");

/** `Bearer <JWT>` for the header, from the key's SHA-256 as hex. */
export function speechEngineAuthorization(keySha256Hex: string, nowMs = Date.now()): string {
  const iat = Math.floor(nowMs / 1000);
  const signed = `${base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${base64url(JSON.stringify({ iss: ISSUER, sub: SUBJECT, iat, exp: iat + LIFETIME_SECONDS }))}`;
  const signature = createHmac("sha256", Buffer.from(keySha256Hex, "hex")).update(signed).digest("base64url");
  return `Bearer ${signed}.${signature}`;
}
