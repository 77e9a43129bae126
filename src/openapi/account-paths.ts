import { ACTIVITY_STATUSES, OUTCOMES } from "../ledger/activity.ts";
import type { DocumentPart } from "./document-types.ts";
import { failures, KEY_FAILURES } from "./error-envelopes.ts";
import { answer, json, jsonBody, pathParam, query } from "./operation.ts";
import { array, boolean, constant, integer, nullable, number, object, oneOfValues, ref, string, timestamp } from "./schema.ts";
import { CURSOR, LIMIT, page } from "./paging.ts";
import { KEY_LIMITS_BODY } from "./limits-paths.ts";
import { BEARER, NO_KEY } from "./security.ts";

// `/account/*` (docs/account.md): signup by e-mail code, balance, activity, usage, transactions,
// top-up links and keys. Every failure is `invalid_request` in the flat envelope, naming the parameter.

const BAD_QUERY = "`invalid_request` naming the parameter (`param`): a bad value, an unknown parameter, a single one given twice";
const JSON_OBJECT = "a body that is not a JSON object";
const TOO_LARGE = { 413: "`payload_too_large`: over 64 KiB" };
const usd = (description?: string) => number(description);

export const accountPaths: DocumentPart = {
  schemas: {
    Balance: object({
      state: oneOfValues(["ok", "exhausted"], "`exhausted`: nothing is spendable"),
      paid_credits: integer("1 credit = 0.000001 USD"),
      spendable_paid_credits: integer("Paid credits not held by requests in flight"),
      promotional_credits: integer("What unexpired grants have left"),
      paid_balance_usd: usd(),
      updated_at: timestamp(),
      promotion_grants: array(
        object({
          name: string(),
          remaining_credits: integer(),
          remaining_usd: usd(),
          expires_at: nullable(timestamp()),
          eligible: boolean(),
          targets: array(object({ provider: string(), model: string("A canonical slug, the provider's model id, or `*`") }), "Empty: any binding"),
        }),
      ),
      top_ups: boolean("Whether this server makes top-up links (Stripe or the sandbox is configured); false: `POST /account/top-up-link` answers 503"),
    }),
    Activity: object(
      {
        id: string(),
        started_at: timestamp(),
        finished_at: timestamp(),
        latency_ms: integer("First input to first output, or the whole request when there was no output"),
        provider: string(),
        model: string(),
        capability: oneOfValues(["tts", "stt"]),
        status: oneOfValues(ACTIVITY_STATUSES),
        outcome: oneOfValues(OUTCOMES, "How the request ended (beyond the interface): the outcome its log line and `voxroute_requests_total` name"),
        usage_unit: oneOfValues(["characters", "seconds"]),
        usage_amount: number(),
        credits: integer(),
        cost_usd: usd(),
        attempts: array(object({ provider: string(), reason: string() }), "Providers that failed before the one recorded"),
      },
      {
        voice: string("The voice a TTS request named"),
        parts: array(
          object({ provider: string(), model: string(), units: number(), credits: integer() }, { voice: string("TTS: the voice that spoke this part") }),
          "Present when more than one binding served the request (a failover mid-session): each one's share, in order, at its own rate; `provider` and `model` above are then the last one's, `usage_amount` and `credits` the sums",
        ),
        cached_units: integer(
          "TTS: characters of `usage_amount` played from the router's TTS cache, billed at the model's price times the deployment's cache price factor (docs/tts-cache.md#billing); absent when none",
        ),
      },
    ),
    ApiKey: object({
      id: string(),
      prefix: string("The key's first 12 characters (`vxr_AbCdEfGh`): keys are stored only as a hash"),
      created_at: timestamp(),
      revoked_at: nullable(timestamp()),
      last_used_at: nullable(timestamp("The start of its latest request in the activity of the last 90 days")),
    }),
    Transaction: object({
      id: string(),
      created_at: timestamp(),
      type: oneOfValues(["top_up", "grant", "welcome", "adjustment", "charge"]),
      credits: integer("Negative for a charge"),
      amount_usd: usd(),
      description: string(),
    }),
  },
  paths: {
    "/account/agent-signup": {
      post: {
        operationId: "requestSignupCode",
        summary: "Send a six-digit code to an e-mail address",
        description: "For a new or an existing account; the code works once, for five minutes. Limits per 15 minutes: 3 codes per address, 10 per client address.",
        tags: ["account"],
        security: NO_KEY,
        requestBody: jsonBody(object({ email: string(undefined, { format: "email", maxLength: 254 }) })),
        responses: {
          200: answer("Sent", json(object({ success: constant(true), expiresIn: integer("Seconds the code is valid (300)") }))),
          ...failures("native", { 400: `\`invalid_request\`: not an e-mail address, ${JSON_OBJECT}`, ...TOO_LARGE, 429: "`invalid_request`: too many codes (`retry_after`, `Retry-After`)" }),
        },
      },
    },
    "/account/agent-signup/verify": {
      post: {
        operationId: "verifySignupCode",
        summary: "Exchange the code for an API key (shown only here)",
        description: "A new account receives the welcome grant; an existing one gets a new key, its other keys keep working.",
        tags: ["account"],
        security: NO_KEY,
        requestBody: jsonBody(object({ email: string(undefined, { format: "email" }), code: string("The six digits", { pattern: "^[0-9]{6}$" }) })),
        responses: {
          200: answer("The key", json(object({ success: constant(true), api_key: string("The full key: shown only here"), key_prefix: string(), account_id: string(), new_account: boolean() }))),
          ...failures("native", { 400: `\`invalid_request\` (\`param\`: \`code\` or \`email\`): a wrong, expired or voided code, ${JSON_OBJECT}`, ...TOO_LARGE }),
        },
      },
    },
    "/account/balance": {
      get: {
        operationId: "getBalance",
        summary: "Balance, spendable credits and promotional grants",
        tags: ["account"],
        security: BEARER,
        responses: { 200: answer("The balance (also at zero)", json(ref("Balance"))), ...failures("native", KEY_FAILURES) },
      },
    },
    "/account/activity": {
      get: {
        operationId: "listActivity",
        summary: "Requests, newest first",
        tags: ["account"],
        security: BEARER,
        parameters: [
          query("start_time", "Inclusive; default 30 days before `end_time`", timestamp()),
          query("end_time", "Inclusive; default now; at most 90 days after `start_time`", timestamp()),
          query("provider", "Only this provider", string(undefined, { minLength: 1, maxLength: 200 })),
          query("model", "Only this canonical model", string(undefined, { minLength: 1, maxLength: 200 })),
          query("capability", "Only TTS or STT", oneOfValues(["tts", "stt"])),
          query("status", "Only this status", oneOfValues(ACTIVITY_STATUSES)),
          LIMIT,
          CURSOR,
        ],
        responses: { 200: answer("A page of requests", json(page("Activity"))), ...failures("native", { 400: BAD_QUERY, ...KEY_FAILURES }) },
      },
    },
    "/account/usage": {
      get: {
        operationId: "getDailyUsage",
        summary: "Daily usage per API key",
        description: "UTC days, inclusive, at most 90; one item per day and key that had requests, oldest first.",
        tags: ["account"],
        security: BEARER,
        parameters: [query("start_date", "Default 30 days before `end_date`", string(undefined, { format: "date" })), query("end_date", "Default today", string(undefined, { format: "date" }))],
        responses: {
          200: answer(
            "Usage",
            json(
              object({
                start_date: string(undefined, { format: "date" }),
                end_date: string(undefined, { format: "date" }),
                items: array(
                  object({
                    date: string(undefined, { format: "date" }),
                    api_key: nullable(object({ id: string(), prefix: nullable(string()) })),
                    requests: integer(),
                    failed: integer("Requests that did not complete: failed and interrupted"),
                    characters: number(),
                    seconds: number(),
                    cached_characters: integer("Of `characters`, those the router's TTS cache played (docs/tts-cache.md#billing)"),
                    credits: integer(),
                    cost_usd: usd(),
                  }),
                ),
              }),
            ),
          ),
          ...failures("native", { 400: BAD_QUERY, ...KEY_FAILURES }),
        },
      },
    },
    "/account/transactions": {
      get: {
        operationId: "listTransactions",
        summary: "Credit transactions: grants, top-ups, adjustments, charges",
        description: "Organization-level credit events, newest first; usage debits are in `/account/activity`.",
        tags: ["account"],
        security: BEARER,
        parameters: [LIMIT, CURSOR],
        responses: { 200: answer("A page of transactions", json(page("Transaction"))), ...failures("native", { 400: BAD_QUERY, ...KEY_FAILURES }) },
      },
    },
    "/account/top-up-link": {
      post: {
        operationId: "createTopUpLink",
        summary: "A payment link for 5 to 1000 USD of credits",
        description: "The same `Idempotency-Key` with the same amount returns the same link.",
        tags: ["account"],
        security: BEARER,
        parameters: [{ name: "Idempotency-Key", in: "header", description: "Makes a retry return the same link", schema: string(undefined, { minLength: 1, maxLength: 255 }) }],
        requestBody: jsonBody(object({ amount_usd: number("At most two decimals", { minimum: 5, maximum: 1000 }) })),
        responses: {
          200: answer("The link", json(object({ url: string("The checkout page", { format: "uri" }), amount_usd: usd(), expires_at: timestamp() }))),
          ...failures("native", {
            400: `\`invalid_request\`: a bad \`amount_usd\` or \`Idempotency-Key\`, the key reused with another amount, ${JSON_OBJECT}`,
            ...KEY_FAILURES,
            ...TOO_LARGE,
            502: "`upstream_error`: the payment provider could not make a checkout link",
            503: "`service_unavailable`: top-ups are not enabled on this server",
          }),
        },
      },
    },
    "/account/keys": {
      get: {
        operationId: "listKeys",
        summary: "The account's API keys, newest first, by prefix",
        tags: ["account"],
        security: BEARER,
        responses: { 200: answer("Every key of the account", json(object({ items: array(ref("ApiKey")) }))), ...failures("native", { 400: BAD_QUERY, ...KEY_FAILURES }) },
      },
      post: {
        operationId: "createKey",
        summary: "Create an API key (shown only here)",
        description: "No body, `{}`, or the key's own limits (docs/limits.md#setting-limits). An account holds at most 100 live keys.",
        tags: ["account"],
        security: BEARER,
        requestBody: { ...jsonBody(KEY_LIMITS_BODY), required: false },
        responses: {
          201: answer("The key", json(object({ api_key: string("The full key: shown only here"), id: string(), key_prefix: string(), limits: ref("Limits") }))),
          ...failures("native", {
            400: "`invalid_request` (`param` naming the member): a member other than the key's limits, a bad value, a limit above the account's own; or 100 live keys already",
            ...KEY_FAILURES,
            ...TOO_LARGE,
          }),
        },
      },
    },
    "/account/keys/{key}": {
      delete: {
        operationId: "revokeKey",
        summary: "Revoke a key by its id or prefix",
        description: "It stops authenticating at once; its open sessions end within `ACCESS_CHECK_INTERVAL_MS`. A key may revoke itself.",
        tags: ["account"],
        security: BEARER,
        parameters: [pathParam("key", "The key's `id`, or its `prefix`", string(undefined, { minLength: 1, maxLength: 200 }))],
        responses: {
          204: answer("Revoked"),
          ...failures("native", {
            400: "`invalid_request` (`param`: `key`): a prefix several live keys share (name it by `id`)",
            ...KEY_FAILURES,
            404: "`not_found` (`param`: `key`): no live key of this account has that id or prefix",
          }),
        },
      },
    },
  },
};
