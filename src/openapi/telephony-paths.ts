import type { DocumentPart, Operation } from "./document-types.ts";
import { failures, KEY_FAILURES } from "./error-envelopes.ts";
import { answer, json, jsonBody, pathParam, query } from "./operation.ts";
import { constant, object, oneOfValues, ref, string, timestamp } from "./schema.ts";
import { page } from "./paging.ts";
import { BEARER, NO_KEY } from "./security.ts";

// Phone links, the carriers' call webhook and their media sockets (docs/telephony.md).

const PROFILE_ID = pathParam("profile_id", "The profile's id (`rp_…`)");
const NOT_FOUND = "`not_found`: no such profile of this tenant";

const link = (made: boolean) =>
  object(
    {
      id: string("`pl_…`"),
      object: constant("realtime.phone_link"),
      carrier: oneOfValues(["twilio", "telnyx"]),
      profile_id: string(),
      ...(made ? { webhook_url: string("Where the carrier POSTs when the number rings; its token is said only here (stored hashed)", { format: "uri" }) } : {}),
      created_at: timestamp(),
    },
    {},
  );

/** A carrier's media socket: opened by the carrier from the markup the webhook answered, never by a client. */
function mediaSocket(carrier: "twilio" | "telnyx"): Operation {
  const name = carrier === "twilio" ? "Twilio Media Streams" : "Telnyx media streaming";
  const credential =
    carrier === "twilio" ? "the single-use credential comes in `start.customParameters`" : "the single-use credential comes in the URL's `credential` query parameter, checked on `start`";
  return {
    operationId: `${carrier}MediaSocket`,
    summary: `A phone call's audio, in ${name}' frames (WebSocket)`,
    description: `Opened by ${carrier === "twilio" ? "Twilio" : "Telnyx"} from the webhook's markup; ${credential}. Without a valid one within 5 s the socket closes (4401, or 1008 \`invalid_media_frame\`) and nothing is billed.\n\n**WebSocket.** Frames and close codes are in \`docs/telephony.md\`.`,
    tags: ["realtime"],
    security: NO_KEY,
    ...(carrier === "telnyx" ? { parameters: [query("credential", "The single-use credential the TeXML put in the stream URL")] } : {}),
    "x-websocket": { channel: `/v1/telephony/media/${carrier}`, docs: "docs/telephony.md" },
    responses: { 101: { description: "Switching Protocols: the socket is open" }, ...failures("native", { 426: "`websocket_upgrade_required`: a plain GET without the upgrade" }) },
  };
}

export const telephonyPaths: DocumentPart = {
  schemas: { PhoneLink: link(false) },
  paths: {
    "/v1/realtime/profiles/{profile_id}/phone-links": {
      post: {
        operationId: "createPhoneLink",
        summary: "Point a Twilio or Telnyx number at a realtime profile",
        description: "Answers the number's `webhook_url` (docs/telephony.md). The carrier's credential is kept to check its signatures and never returned.",
        tags: ["realtime"],
        security: BEARER,
        parameters: [PROFILE_ID],
        requestBody: jsonBody(
          object(
            { carrier: oneOfValues(["twilio", "telnyx"]) },
            {
              twilio_auth_token: string("With `twilio`: the account's auth token, which signs its webhooks", { maxLength: 200 }),
              telnyx_public_key: string("With `telnyx`: the account's public key as the portal shows it (base64 of 32 Ed25519 bytes)", { maxLength: 200 }),
            },
          ),
        ),
        responses: {
          201: answer("The link, with its webhook URL", json(link(true))),
          ...failures("native", {
            400: "`invalid_request` naming the member (`param`): no or another `carrier`, its credential missing or malformed, a body that is not a JSON object; a profile with 100 links",
            ...KEY_FAILURES,
            404: NOT_FOUND,
            413: "`payload_too_large`: over 64 KiB",
          }),
        },
      },
      get: {
        operationId: "listPhoneLinks",
        summary: "A profile's phone links",
        description: "Oldest first, all in one page; the webhook URLs are not listed (their tokens are not kept).",
        tags: ["realtime"],
        security: BEARER,
        parameters: [PROFILE_ID],
        responses: { 200: answer("The links", json(page("PhoneLink"))), ...failures("native", { ...KEY_FAILURES, 404: NOT_FOUND }) },
      },
    },
    "/v1/realtime/phone-links/{id}": {
      delete: {
        operationId: "deletePhoneLink",
        summary: "Revoke a phone link",
        description: "Its webhook answers 403 from now on.",
        tags: ["realtime"],
        security: BEARER,
        parameters: [pathParam("id", "The link's id (`pl_…`)")],
        responses: {
          200: answer("The revoked link", json({ allOf: [ref("PhoneLink"), object({ deleted: constant(true) })] })),
          ...failures("native", { ...KEY_FAILURES, 404: "`not_found`: no such live link of this tenant" }),
        },
      },
    },
    "/v1/telephony/calls/{token}": {
      post: {
        operationId: "phoneCallWebhook",
        summary: "A carrier's call webhook (signature verified)",
        description:
          "POSTed by Twilio (`X-Twilio-Signature`) or Telnyx (`telnyx-signature-ed25519`, `telnyx-timestamp`) when the linked number rings. Answers TwiML or TeXML connecting a bidirectional stream to the media socket, or, when the tenant cannot pay, `<Say>` and `<Hangup/>`. The URL's own query parameters reach the application as `setup.customParameters`.",
        tags: ["realtime"],
        security: NO_KEY,
        parameters: [pathParam("token", "The link's token, from its `webhook_url`")],
        requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: object({}, { CallSid: string(), From: string(), To: string(), Direction: string() }) } } },
        responses: {
          200: answer("TwiML or TeXML", { "application/xml": { schema: string() } }),
          ...failures("native", { 403: "`invalid_signature`: no or a wrong signature, a stale Telnyx timestamp, an unknown or revoked link", 413: "`payload_too_large`: over 64 KiB" }),
        },
      },
    },
    "/v1/telephony/media/twilio": { get: mediaSocket("twilio") },
    "/v1/telephony/media/telnyx": { get: mediaSocket("telnyx") },
  },
};
