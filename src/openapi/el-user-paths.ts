import type { DocumentPart } from "./document-types.ts";
import { failures } from "./error-envelopes.ts";
import { EL_KEY_FAILURES } from "./el-speech-paths.ts";
import { answer, json } from "./operation.ts";
import { array, boolean, constant, integer, object, oneOfValues, ref, string } from "./schema.ts";
import { EL_KEY } from "./security.ts";

// `GET /el/v1/user` and `/el/v1/user/subscription` (docs/compat-el.md#user-and-subscription): the
// account's balance as ElevenLabs' character quota. Fields with no meaning here are constant.

const flag = boolean();
const zero = integer();

const SUBSCRIPTION = {
  tier: constant("pay_as_you_go"),
  character_count: integer("TTS characters billed this calendar month (UTC)"),
  character_limit: integer("`character_count` plus the characters the account can still pay for"),
  max_character_limit_extension: zero,
  max_credit_limit_extension: zero,
  can_extend_character_limit: flag,
  allowed_to_extend_character_limit: flag,
  next_character_count_reset_unix: integer("The first of next month, 00:00 UTC"),
  voice_slots_used: integer("The account's cloned voices"),
  professional_voice_slots_used: zero,
  professional_voice_slots_used_in_workspace: zero,
  voice_limit: integer(),
  voice_add_edit_counter: zero,
  professional_voice_limit: zero,
  can_extend_voice_limit: flag,
  can_use_instant_voice_cloning: flag,
  can_use_professional_voice_cloning: flag,
  currency: constant("usd"),
  current_overage: object({ amount: string(), currency: string() }),
  status: oneOfValues(["active", "free_disabled"]),
  billing_period: constant("monthly_period"),
  character_refresh_period: constant("monthly_period"),
};

export const elUserPaths: DocumentPart = {
  schemas: { ElevenLabsSubscription: object(SUBSCRIPTION) },
  paths: {
    "/el/v1/user": {
      get: {
        operationId: "elGetUser",
        summary: "ElevenLabs-compatible user: the account's quota",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        responses: {
          200: answer(
            "The user",
            json(
              object({
                user_id: string("The account's id"),
                workspace_id: string(),
                subscription: ref("ElevenLabsSubscription"),
                is_new_user: flag,
                can_use_delayed_payment_methods: flag,
                is_onboarding_completed: flag,
                is_onboarding_checklist_completed: flag,
                created_at: integer("Unix seconds"),
                seat_type: constant("workspace_admin"),
              }),
            ),
          ),
          ...failures("el", EL_KEY_FAILURES),
        },
      },
    },
    "/el/v1/user/subscription": {
      get: {
        operationId: "elGetSubscription",
        summary: "ElevenLabs-compatible subscription: characters used and left",
        tags: ["ElevenLabs-compatible"],
        security: EL_KEY,
        responses: {
          200: answer("The subscription", json(object({ ...SUBSCRIPTION, open_invoices: array(object({})), has_open_invoices: constant(false) }))),
          ...failures("el", EL_KEY_FAILURES),
        },
      },
    },
  },
};
