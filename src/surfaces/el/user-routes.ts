import { eq } from "drizzle-orm";
import { Elysia } from "elysia";
import type { Principal } from "../../accounts/keys.ts";
import type { AppContext } from "../../context.ts";
import { elAuth } from "./auth.ts";
import { characterQuota } from "./quota.ts";

// `GET /el/v1/user` and `GET /el/v1/user/subscription` (the SDK's `user.get()` and
// `user.subscription.get()`): the account's balance in ElevenLabs' shape, for apps that show the
// quota left. Every field the SDK requires is present; those with no meaning here are constant.

/** There is no cap on cloned voices: this stands for it where the SDK wants a number. */
const NO_VOICE_LIMIT = 10_000;

async function subscription(ctx: AppContext, tenantId: string) {
  const [quota, voices] = await Promise.all([characterQuota(ctx, tenantId), ctx.customVoices.list(tenantId)]);
  const canClone = ctx.customVoices.cloners().length > 0;
  return {
    tier: "pay_as_you_go",
    character_count: quota.used,
    character_limit: quota.used + quota.remaining,
    max_character_limit_extension: 0,
    max_credit_limit_extension: 0,
    can_extend_character_limit: false,
    allowed_to_extend_character_limit: false,
    next_character_count_reset_unix: quota.resetsAt,
    voice_slots_used: voices.length,
    professional_voice_slots_used: 0,
    professional_voice_slots_used_in_workspace: 0,
    voice_limit: canClone ? NO_VOICE_LIMIT : voices.length,
    voice_add_edit_counter: 0,
    professional_voice_limit: 0,
    can_extend_voice_limit: false,
    can_use_instant_voice_cloning: canClone,
    can_use_professional_voice_cloning: false,
    currency: "usd",
    current_overage: { amount: "0", currency: "usd" },
    status: quota.remaining > 0 ? "active" : "free_disabled",
    billing_period: "monthly_period",
    character_refresh_period: "monthly_period",
  };
}

async function user(ctx: AppContext, principal: Principal) {
  const t = ctx.database.schema.tenants;
  const [tenant] = await ctx.database.db.select({ createdAt: t.createdAt }).from(t).where(eq(t.id, principal.tenantId));
  return {
    user_id: principal.tenantId,
    workspace_id: principal.tenantId,
    subscription: await subscription(ctx, principal.tenantId),
    is_new_user: false,
    can_use_delayed_payment_methods: false,
    is_onboarding_completed: true,
    is_onboarding_checklist_completed: true,
    created_at: tenant ? Math.floor(tenant.createdAt.getTime() / 1000) : 0,
    seat_type: "workspace_admin",
  };
}

export function elevenLabsUserRoutes(ctx: AppContext) {
  return new Elysia()
    .use(elAuth(ctx))
    .get("/v1/user", ({ principal }) => user(ctx, principal))
    .get("/v1/user/subscription", async ({ principal }) => ({ ...(await subscription(ctx, principal.tenantId)), open_invoices: [], has_open_invoices: false }));
}
