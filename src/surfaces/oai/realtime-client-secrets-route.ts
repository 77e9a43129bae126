import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import type { SecretGrant } from "../../realtime/client-secrets.ts";
import { isObject } from "../../util/is-object.ts";
import { BODY_LIMITS, jsonBody } from "../request-body.ts";
import { oaiAuth } from "./auth.ts";
import { heardFrom } from "./realtime-conversation.ts";
import { EPHEMERAL_PREFIX } from "./realtime-credential.ts";
import { PCM_24K } from "./realtime-audio.ts";
import { type HeardAs, sessionObject } from "./realtime-port.ts";
import { planTranscription, settingsFrom, transcriptionSessionObject } from "./realtime-transcription.ts";

// `POST /oai/realtime/client_secrets`: OpenAI's ephemeral keys (`ek_…`) for browsers and phones,
// minted by the builder's backend with its API key. One opens one `/oai/realtime` socket (ours are
// single-use, unlike OpenAI's), for the session it was minted with: a profile's conversation
// (`session.type` realtime, `session.model` the profile id) or a transcription session.

const EXPIRES = { min: 10, max: 7200, default: 600 };

function secondsOf(body: Record<string, unknown>): number {
  if (body.expires_after === undefined) return EXPIRES.default;
  const after = isObject(body.expires_after) ? body.expires_after : {};
  if (after.anchor !== undefined && after.anchor !== "created_at") throw new ApiError("invalid_request", "expires_after.anchor must be created_at", { param: "expires_after.anchor" });
  if (after.seconds === undefined) return EXPIRES.default;
  const s = after.seconds;
  if (typeof s !== "number" || !Number.isInteger(s) || s < EXPIRES.min || s > EXPIRES.max) {
    throw new ApiError("invalid_request", `expires_after.seconds must be a whole number from ${EXPIRES.min} to ${EXPIRES.max}`, { param: "expires_after.seconds" });
  }
  return s;
}

/** What of the session a socket uses, kept with the secret (instructions, tools and the rest are the profile's business). */
function kept(session: Record<string, unknown>): Record<string, unknown> {
  const input = isObject(session.audio) && isObject(session.audio.input) ? session.audio.input : undefined;
  if (!input) return { type: session.type };
  const { format, transcription, turn_detection } = input;
  return { type: session.type, audio: { input: { format, transcription, turn_detection } } };
}

export function oaiRealtimeClientSecretsRoute(ctx: AppContext) {
  return new Elysia().use(oaiAuth(ctx)).post(
    "/realtime/client_secrets",
    async ({ request, principal }) => {
      const body = await jsonBody(request, BODY_LIMITS.clientSecret);
      if (!isObject(body)) throw new ApiError("invalid_request", "the body must be a JSON object");
      const seconds = secondsOf(body);
      const session = isObject(body.session) ? body.session : undefined;
      if (!session) throw new ApiError("invalid_request", 'session is required: {"type":"realtime","model":"<profile id>"} or {"type":"transcription",…}', { param: "session" });
      let grant: SecretGrant;
      let described: Record<string, unknown>;
      if (session.type === "transcription") {
        const settings = settingsFrom(session);
        planTranscription(ctx, settings);
        grant = { profileId: null, session: kept(session) };
        described = transcriptionSessionObject(undefined, settings);
      } else {
        if (typeof session.model !== "string" || !session.model) throw new ApiError("model_required", "session.model is required: the id of a realtime profile", { param: "session.model" });
        const profile = await ctx.profiles.get(principal.tenantId, session.model).catch((err) => {
          throw err instanceof ApiError && err.code === "not_found" ? new ApiError("model_not_found", `${session.model} is not a realtime profile of this account`, { param: "session.model" }) : err;
        });
        const heard: HeardAs = heardFrom(session, { format: PCM_24K, manualCommits: false });
        grant = { profileId: profile.id, session: kept(session) };
        described = sessionObject(undefined, profile.id, heard);
      }
      const { secret, expiresAt } = await ctx.clientSecrets.grant(principal, grant, seconds, EPHEMERAL_PREFIX);
      return { value: secret, expires_at: Math.floor(expiresAt.getTime() / 1000), session: described };
    },
    { parse: "none" },
  );
}
