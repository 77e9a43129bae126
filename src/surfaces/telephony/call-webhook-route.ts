import { Elysia } from "elysia";
import type { AppContext } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { limitsOfKey } from "../../limits/key-limits.ts";
import type { CallIdentity } from "../../realtime/app-messages.ts";
import type { LinkedNumber } from "../../realtime/phone-links.ts";
import { phonePlan } from "../../realtime/phone-profile.ts";
import { publicBase } from "../public-base.ts";
import { BODY_LIMITS, textBody } from "../request-body.ts";
import { sayAndHangUp, telnyxStream, twilioStream } from "./call-markup.ts";
import { telnyxSigned, twilioSigned } from "./carrier-signatures.ts";

// The carrier's call webhook (docs/telephony.md#the-call-webhook): a link's `webhook_url`,
// POSTed form-encoded when its number rings. The signature is checked first; anything unsigned is
// 403 before any session, credential or charge. A signed call gets the markup that connects its
// bidirectional stream to the media socket, with a single-use credential minted for the link's
// owner; the call's identifiers (and the webhook URL's own query parameters, as custom
// parameters) ride in that credential to the application's `setup`.

export const WEBHOOK_PATH = "/v1/telephony/calls";
export const MEDIA_PATH = "/v1/telephony/media";

/** How long the credential in the markup stays good: the carrier opens the stream within a second or two. */
const CREDENTIAL_SECONDS = 60;

const OUT_OF_BALANCE = "This number's account has run out of credit. Goodbye.";
const UNAVAILABLE = "This number cannot take calls right now. Goodbye.";

/** What a credential minted for a call grants besides its profile (client secrets keep it as their session). */
export interface CallGrant {
  call: Partial<CallIdentity>;
  customParameters: Record<string, string>;
}

function signed(link: LinkedNumber, request: Request, url: string, body: string): boolean {
  if (link.carrier === "telnyx") return telnyxSigned(link.credential, body, request.headers.get("telnyx-signature-ed25519"), request.headers.get("telnyx-timestamp"));
  return twilioSigned(link.credential, url, [...new URLSearchParams(body)], request.headers.get("x-twilio-signature"));
}

/** The call's identifiers from the form both carriers post (TeXML keeps TwiML's names), in the fields of ConversationRelay's `setup`. */
function callOf(form: URLSearchParams): Partial<CallIdentity> {
  const field = (name: string) => (form.get(name) ?? "").slice(0, 128);
  return {
    callSid: field("CallSid"),
    accountSid: field("AccountSid"),
    parentCallSid: field("ParentCallSid"),
    from: field("From"),
    to: field("To"),
    forwardedFrom: field("ForwardedFrom"),
    callerName: field("CallerName"),
    callStatus: field("CallStatus"),
    direction: field("Direction") || "inbound",
  };
}

/** Whether the link's owner can pay for the profile's conversation now; throws what says why not. */
async function affordable(ctx: AppContext, link: LinkedNumber): Promise<void> {
  const profile = await ctx.profiles.get(link.tenantId, link.profileId);
  const { conversation } = phonePlan(ctx.catalogue, (id) => ctx.sttProviders.get(id), profile);
  const payer = { tenantId: link.tenantId, keyId: link.keyId, limits: await limitsOfKey(ctx.database.sql, link.keyId) };
  await ctx.meter.admit(payer, conversation.stt.candidates);
  await ctx.meter.admit(payer, conversation.tts.candidates);
}

const markup = (body: string, status = 200) => new Response(body, { status, headers: { "content-type": "application/xml; charset=utf-8" } });

export function callWebhookRoute(ctx: AppContext) {
  return new Elysia().post(
    `${WEBHOOK_PATH}/:token`,
    async ({ request, params }) => {
      const body = await textBody(request, BODY_LIMITS.telephony);
      const link = await ctx.phoneLinks.byToken(params.token);
      const base = publicBase(ctx, request);
      const { pathname, search } = new URL(request.url);
      if (!link || !signed(link, request, base + pathname + search, body)) throw new ApiError("invalid_signature", "the request is not signed by the carrier of this number");
      const call = callOf(new URLSearchParams(body));
      const log = ctx.log.child({ phoneLink: link.id, callSid: call.callSid });
      try {
        await affordable(ctx, link);
      } catch (err) {
        const out = err instanceof ApiError && (err.code === "insufficient_balance" || err.code === "budget_exceeded");
        log.info({ code: err instanceof ApiError ? err.code : "internal_error" }, out ? "call refused: out of balance" : "call refused");
        return markup(sayAndHangUp(out ? OUT_OF_BALANCE : UNAVAILABLE));
      }
      const grant: CallGrant = { call, customParameters: Object.fromEntries(new URLSearchParams(search)) };
      const { secret } = await ctx.clientSecrets.grant(link, { profileId: link.profileId, session: { ...grant } }, CREDENTIAL_SECONDS, "vxr_cs_");
      const mediaUrl = `${base.replace(/^http/, "ws")}${MEDIA_PATH}/${link.carrier}`;
      log.info({ carrier: link.carrier }, "call answered with a media stream");
      return markup(link.carrier === "twilio" ? twilioStream(mediaUrl, secret) : telnyxStream(mediaUrl, secret));
    },
    { parse: "none" },
  );
}
