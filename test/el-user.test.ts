import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ElevenLabsClient, type ElevenLabsError } from "@elevenlabs/elevenlabs-js";
import { creditsPerBaseUnit } from "../src/catalogue/pricing.ts";
import { fundedAccount, lastActivity } from "./helpers/accounts.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

// GET /el/v1/user and /el/v1/user/subscription through the ElevenLabs SDK: the balance as
// characters at the account's cheapest TTS model, this month's TTS characters as used.

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop(0));

const sdk = (apiKey: string) => new ElevenLabsClient({ apiKey, baseUrl: `${server.url}/el`, maxRetries: 0 });

/** Characters `credits` buy at the cheapest priced TTS model (none of the test catalogue's has a per-request price). */
function charactersAtCheapest(credits: number): number {
  const rates = server.ctx.catalogue.bindings.filter((b) => b.capability === "tts" && b.price).map((b) => creditsPerBaseUnit(b.price!));
  return Math.max(...rates.map((r) => Number((BigInt(credits) * r.den) / r.num)));
}

describe("/el/v1/user with the ElevenLabs SDK", () => {
  test("subscription.get(): the limit is what the credits buy at the cheapest model; speech used this month counts", async () => {
    const { key, tenantId } = await fundedAccount(server, 1_000_000);
    const client = sdk(key);
    const before = await client.user.subscription.get();
    expect(before).toMatchObject({ tier: "pay_as_you_go", characterCount: 0, characterLimit: charactersAtCheapest(1_000_000), status: "active", currency: "usd", hasOpenInvoices: false });
    const now = new Date();
    expect(before.nextCharacterCountResetUnix).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000);

    const stream = await client.textToSpeech.convert("slt", { text: "Twenty-two characters.", modelId: "flite", outputFormat: "pcm_16000" });
    await new Response(stream).arrayBuffer();
    const billed = await lastActivity(server, tenantId);
    const after = await client.user.subscription.get();
    expect(after.characterCount).toBe(billed.usageAmount);
    expect(after.characterLimit - after.characterCount).toBe(charactersAtCheapest(1_000_000 - billed.credits));
  });

  test("user.get(): the tenant as user and workspace, with the same subscription figures", async () => {
    const { key, tenantId } = await fundedAccount(server, 500_000);
    const user = await sdk(key).user.get();
    expect(user).toMatchObject({ userId: tenantId, workspaceId: tenantId, seatType: "workspace_admin", isOnboardingCompleted: true });
    expect(user.createdAt).toBeGreaterThan(0);
    expect(user.subscription).toMatchObject({ characterCount: 0, characterLimit: charactersAtCheapest(500_000), status: "active" });
  });

  test("a promotional grant counts for the models it may pay for; an expired one not at all", async () => {
    const { key, tenantId } = await fundedAccount(server, 0);
    const { ledger } = server.ctx.meter;
    const flite = server.ctx.catalogue.bindings.find((b) => b.provider.id === "flite")!;
    await ledger.credit(tenantId, { credits: 250_000, type: "grant", description: "flite only", grant: { name: "flite", expiresAt: null, targets: [{ provider: "flite", model: "*" }] } });
    await ledger.credit(tenantId, { credits: 900_000, type: "grant", description: "nothing served", grant: { name: "elsewhere", expiresAt: null, targets: [{ provider: "nobody", model: "*" }] } });
    await ledger.credit(tenantId, { credits: 900_000, type: "grant", description: "lapsed", grant: { name: "lapsed", expiresAt: new Date(Date.now() - 1000), targets: [] } });
    const r = creditsPerBaseUnit(flite.price!);
    expect((await sdk(key).user.subscription.get()).characterLimit).toBe(Number((250_000n * r.den) / r.num));
  });

  test("an empty balance answers (no 402): limit equals count, status free_disabled", async () => {
    const { key } = await fundedAccount(server, 0);
    const sub = await sdk(key).user.subscription.get();
    expect(sub).toMatchObject({ characterCount: 0, characterLimit: 0, status: "free_disabled" });
  });

  test("the key is checked: 401", async () => {
    const err = (await sdk("sk-not-a-key")
      .user.get()
      .catch((e: unknown) => e)) as ElevenLabsError;
    expect(err.statusCode).toBe(401);
  });
});
