import type { Principal } from "../accounts/keys.ts";
import type { AppContext } from "../context.ts";
import type { Locator } from "../pronunciation/locators.ts";
import type { Admission } from "../sessions/admission.ts";

/** A session's admission with the payer's dictionaries the request names, read before the meter starts (none named: none read). */
export async function withLexicon(ctx: AppContext, admit: () => Promise<Admission>, payer: Pick<Principal, "tenantId"> | undefined, locators: Locator[] | undefined): Promise<Admission> {
  if (!payer || !locators?.length) return admit();
  const lexicon = await ctx.pronunciation.lexicon(payer.tenantId, locators);
  return { ...(await admit()), lexicon };
}
